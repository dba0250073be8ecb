// GET /pay/{id}: the link's page (its form, or why it is closed). POST /pay/{id}: the form, through
// the command the page exists for (commands/payment-links.ts payThroughLink): 303 to the payment's
// status page; a bad field 400 with the form again and the problem beside the field; a closed link
// 410; nothing created by a refused form. The page's script posts the same form asking for JSON.
import type { Request, Response, Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { DomainError } from '../../domain/errors.ts';
import { payThroughLink } from '../../commands/payment-links.ts';
import { attemptIds } from '../../commands/payment-link-attempts.ts';
import type { MessageKey } from '../../i18n/catalogue.ts';
import { speechOf, type Speech } from '../language.ts';
import { readLink, readPayinOfLink, type PayableLink } from '../reads.ts';
import { checkForm, FIELD_ERRORS, FIELDS, newAttemptId, readForm, validAttempt, type FieldErrors, type FieldName, type FormInput, type PaymentFields } from '../form.ts';
import { formView } from '../pages/form.ts';
import { paymentPath, statusView } from '../pages/status.ts';
import { sendMessage, sendNotFound, sendView } from '../answer.ts';
import { tooMany } from '../refusals.ts';
import { wantsJson } from '../guards.ts';
import type { PayLimits } from '../limits.ts';
import { BASE } from '../pages/layout.ts';

const CLOSED: Record<Exclude<PayableLink['status'], 'active'>, MessageKey> = {
  inactive: 'pay.closed.inactive', completed: 'pay.closed.completed', expired: 'pay.closed.expired',
};

function sendClosed(req: Request, res: Response, sp: Speech, link: PayableLink, status: number): void {
  const why = link.status === 'active' ? 'pay.closed.completed' : CLOSED[link.status];
  sendMessage(req, res, sp, status, 'pay.closed.title', sp.t(why), `${BASE}/${link.id}`);
}

async function showForm(s: ApiServices, req: Request, res: Response): Promise<void> {
  const sp = speechOf(res);
  const link = await readLink(s, String(req.params.id));
  if (!link) return sendNotFound(req, res, sp);
  if (link.status !== 'active') return sendClosed(req, res, sp, link, 410);
  sendView(req, res, sp, 200, formView(sp, link, { values: {}, errors: {}, attemptId: newAttemptId() }));
}

/** The form again, 400 (or `status`), with what was typed and each problem beside its field. */
function formAgain(req: Request, res: Response, sp: Speech, link: PayableLink, input: FormInput, errors: FieldErrors, notice?: MessageKey, status = 400): void {
  const attemptId = validAttempt(input.attempt_id) ? input.attempt_id : newAttemptId();
  sendView(req, res, sp, status, formView(sp, link, { values: input, errors, notice, attemptId }));
}

/** Refusals about the operator chosen (closed for payins, not enabled for the merchant, no route). */
const OPERATOR_REFUSALS = new Set(['operator_unavailable', 'operator_not_enabled', 'unsupported_route', 'provider_unavailable', 'corridor_not_configured']);

/**
 * The command's refusal in the page's words: each field its details name gets its message (an
 * operator refusal says the operator cannot take payments now); a refusal naming no field is told in
 * the summary. Every place held by pending payments: 409, try again in a minute.
 */
function refusalOnForm(err: DomainError): { errors: FieldErrors; notice?: MessageKey; status: number } {
  if (err.code === 'payment_link_busy') return { errors: {}, notice: 'pay.error.busy', status: 409 };
  const operatorRefused = OPERATOR_REFUSALS.has(err.code);
  const errors: FieldErrors = {};
  for (const d of err.details ?? []) {
    if (!(FIELDS as readonly string[]).includes(d.field)) continue;
    const f = d.field as FieldName;
    errors[f] = f === 'operator_code' && operatorRefused ? 'pay.error.unavailable' : FIELD_ERRORS[f];
  }
  if (Object.keys(errors).length > 0) return { errors, status: 400 };
  return { errors, notice: operatorRefused ? 'pay.error.unavailable' : 'pay.error.general', status: 400 };
}

/** The payment's page: 303 to it, or (the script asked) the page itself as JSON with where it is. */
async function answerPayment(s: ApiServices, req: Request, res: Response, link: PayableLink, payinId: string): Promise<void> {
  const location = paymentPath(link, payinId);
  if (!wantsJson(req)) return res.redirect(303, location);
  const payin = await readPayinOfLink(s, link, payinId);
  if (!payin) return sendNotFound(req, res, speechOf(res));
  sendView(req, res, speechOf(res), 200, statusView(speechOf(res), link, payin), location);
}

/**
 * A form posted to a closed link: 410, unless this very form made a payment before the link closed
 * (sent again by Back or a reload after its own payment completed the link): then that payment.
 */
async function closedLink(s: ApiServices, req: Request, res: Response, link: PayableLink, input: FormInput): Promise<void> {
  if (validAttempt(input.attempt_id)) {
    const earlier = await readPayinOfLink(s, link, attemptIds(link.id, input.attempt_id).payinId);
    if (earlier) return answerPayment(s, req, res, link, earlier.id);
  }
  sendClosed(req, res, speechOf(res), link, 410);
}

async function pay(s: ApiServices, limits: PayLimits, req: Request, res: Response): Promise<void> {
  const sp = speechOf(res);
  const link = await readLink(s, String(req.params.id));
  if (!link) return sendNotFound(req, res, sp);
  const wait = limits.submit(req, link.id, Date.now());
  if (wait > 0) return tooMany(req, res, wait);
  const input = readForm(req.body);
  if (link.status !== 'active') return closedLink(s, req, res, link, input);
  if (!validAttempt(input.attempt_id)) return formAgain(req, res, sp, link, input, {}, 'pay.error.attempt');
  const checked = checkForm(link, input);
  if ('errors' in checked) return formAgain(req, res, sp, link, input, checked.errors);
  let payinId: string;
  try {
    payinId = (await payThrough(s, req, link, input.attempt_id, checked.fields)).payinId;
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    if (err.code === 'not_found') return sendNotFound(req, res, sp);
    if (err.code === 'payment_link_closed') return sendClosed(req, res, sp, (await readLink(s, link.id)) ?? link, 410);
    const r = refusalOnForm(err);
    // The attempt's quote expired (left by a submit refused after it): this attempt id can never pay,
    // and made no payin (its quote was never consumed), so the form comes back with a new attempt.
    const again = err.code === 'quote_expired' ? { ...input, attempt_id: newAttemptId() } : input;
    return formAgain(req, res, sp, link, again, r.errors, r.notice, r.status);
  }
  await answerPayment(s, req, res, link, payinId);
}

function payThrough(s: ApiServices, req: Request, link: PayableLink, attemptId: string, f: PaymentFields) {
  const requestId = String((req as Request & { id?: string }).id ?? '');
  return payThroughLink(s, { linkId: link.id, attemptId, ...f }, { requestId, actor: `payer:payment_link:${link.id}` });
}

export function addFormRoutes(r: Router, s: ApiServices, limits: PayLimits): void {
  r.get('/:id', (req, res) => showForm(s, req, res));
  r.post('/:id', (req, res) => pay(s, limits, req, res));
}
