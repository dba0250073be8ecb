// Signed in: refunding a payin from its page (CONTRACT §9), through the very command POST /refunds
// runs (commands/refunds.ts): confirmed first, once per form (form-once.ts: the form's claim id is
// the refund's id, so a claim taken over after a crash finds the refund it made).
import type { Request, Response, Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { can } from '../permissions.ts';
import { DomainError } from '../../domain/errors.ts';
import { parseAmount } from '../../domain/money.ts';
import { createRefund } from '../../commands/refunds.ts';
import * as D from '../data.ts';
import { meta } from '../actions.ts';
import type { Html } from '../../infra/html.ts';
import type { View } from '../http.ts';
import type { Translate } from '../../i18n/catalogue.ts';
import { Refusal, errorText } from '../refusal.ts';
import { BASE, money } from '../pages/layout.ts';
import { confirmPage } from '../pages/confirm.ts';
import { alreadyDonePage } from '../pages/already-done.ts';
import { refundAction, refundsSection } from '../pages/refunds.ts';
import { NONCE_FIELD, once } from '../form-once.ts';
import { field, keepNonce, locals, nonce, requestId, send } from '../http.ts';

/** The payin's refunds, oldest first (the refunds read model, the merchant's own only). */
async function refundsOf(s: ApiServices, merchantId: string, payinId: string): Promise<Array<Record<string, any>>> {
  const rows: Array<{ body: Record<string, any> }> = await s.knex('refunds').where({ merchant_id: merchantId, payin_id: payinId })
    .orderBy([{ column: 'created_at', order: 'asc' }, { column: 'id', order: 'asc' }]).select('body');
  return rows.map((r) => r.body);
}

/** The refunds section of a payin's page. */
export async function payinRefunds(s: ApiServices, v: View, payin: Record<string, any>): Promise<Html> {
  return refundsSection(v, payin, await refundsOf(s, v.session.merchantId, payin.id));
}

/** The amount typed: empty for what is left, else whole francs above zero. */
function amountOf(raw: string): bigint | undefined {
  const v = raw.trim();
  if (v === '') return undefined;
  const amount = parseAmount(v, 'amount');
  if (amount <= 0n) throw new Refusal('dash.error.amount_positive', {}, 'bad_request', [{ field: 'amount', message: 'must be at least 1' }]);
  return amount;
}

/** The API's refusals (refund_exceeds_payin, insufficient_balance…) shown as the dashboard shows a refused form: their message in the page's language, a 400. */
async function refused<R>(t: Translate, run: () => Promise<R>): Promise<R> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof DomainError && err.code !== 'not_found') throw new DomainError('bad_request', errorText(t, err), err.details);
    throw err;
  }
}

async function refund(s: ApiServices, req: Request, res: Response): Promise<void> {
  const { session, t } = locals(res);
  const payinId = String(req.params.id);
  const payin = await D.readResource(s, session.merchantId, requestId(req), 'payins', payinId);
  if (!payin) throw new Refusal('dash.error.payin_not_found', {}, 'not_found');
  const amount = amountOf(field(req, 'amount'));
  const reason = field(req, 'reason').trim().slice(0, 500);
  if (field(req, 'confirmed') !== 'yes') {
    const what = amount === undefined ? t('dash.refunds.all_left') : money(locals(res), amount.toString(), payin.send_currency);
    return send(res, 200, confirmPage(locals(res), {
      title: t('dash.refunds.confirm_title'), question: t('dash.refunds.confirm_question', { what, payer: payin.source?.phone ?? t('dash.refunds.the_payer') }),
      action: refundAction(payinId), button: t('dash.refunds.button'),
      fields: { amount: amount === undefined ? '' : amount.toString(), reason, [NONCE_FIELD]: keepNonce(req) }, back: `${BASE}/payins/${payinId}`,
    }));
  }
  const made = await once(s, session, nonce(req), refundAction(payinId),
    async (refundId) => (await refused(t, () => createRefund(s, {
      refundId, merchantId: session.merchantId, payinId, amount, reason: reason || null, metadata: {},
    }, meta(session, requestId(req))))).state.created!,
    (r) => ({ action: 'refund_created', refund_id: r.refund_id }));
  if (made.kind === 'repeat') return send(res, 409, alreadyDonePage(locals(res), made.summary));
  res.redirect(303, `${BASE}/payins/${payinId}?done=refunded`);
}

export function addRefundRoutes(r: Router, s: ApiServices): void {
  r.post('/payins/:id/refunds', can('refunds:create'), (req, res) => refund(s, req, res));
}
