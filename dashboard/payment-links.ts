// The Payment links pages' reads and actions (CONTRACT §16). Reads go through the merchant API's own
// handlers (api/routes/payment-links.ts) for the session's merchant, so a link shows exactly as
// GET /payment-links answers it (its status computed now, its URLs under PUBLIC_BASE_URL or the
// origin the dashboard was reached at); creating and deactivating run the very commands the API runs
// (commands/payment-links.ts), recorded with the actor `dashboard:<user id>`.
import type { ApiServices } from '../api/services.ts';
import { paymentLinksModule } from '../api/routes/payment-links.ts';
import { createPaymentLink, deactivatePaymentLink } from '../commands/payment-links.ts';
import { DomainError } from '../domain/errors.ts';
import { calendarDayStart } from '../domain/dates.ts';
import type { MessageKey, Translate } from '../i18n/catalogue.ts';
import type { Session } from './session.ts';
import { meta } from './actions.ts';
import { call, ctxFor, PAGE_SIZE, UUID } from './data.ts';
import { errorText } from './refusal.ts';
import { keyFor } from './words.ts';

/** What the create form sends, as typed (shown again beside a refusal). */
export interface LinkForm { amount: string; currency: string; description: string; expires: string; maxPayments: string }

export const LINK_CURRENCIES = ['XAF', 'XOF'] as const;

/** Where the request reached the service: the links' URLs are made under it (unless PUBLIC_BASE_URL is set). */
export interface Reached { requestId: string; host: string | undefined }

const ctxOf = (s: ApiServices, merchantId: string, r: Reached, params: Record<string, string> = {}, query: Record<string, unknown> = {}) =>
  ctxFor(s, merchantId, r.requestId, params, query, r.host === undefined ? {} : { host: r.host });

export async function linksOf(s: ApiServices, merchantId: string, r: Reached, cursor: string | undefined): Promise<{ data: Array<Record<string, any>>; next_cursor: string | null }> {
  return call(paymentLinksModule.handlers.listPaymentLinks!, ctxOf(s, merchantId, r, {}, { limit: PAGE_SIZE, cursor }));
}

/** The merchant's link, or undefined (another merchant's link answers exactly like none). */
export async function linkOf(s: ApiServices, merchantId: string, r: Reached, id: string): Promise<Record<string, any> | undefined> {
  if (!UUID.test(id)) return undefined;
  return call(paymentLinksModule.handlers.getPaymentLink!, ctxOf(s, merchantId, r, { payment_link_id: id.toLowerCase() }));
}

/** The link's payins, newest first (its first page). */
export async function linkPayins(s: ApiServices, merchantId: string, r: Reached, id: string): Promise<Array<Record<string, any>>> {
  const page = await call(paymentLinksModule.handlers.listPaymentLinkPayments!, ctxOf(s, merchantId, r, { payment_link_id: id }, { limit: PAGE_SIZE }));
  return page?.data ?? [];
}

/**
 * A day (YYYY-MM-DD) as the instant the link stops: the end of that UTC day. Empty: never. A day
 * that does not exist is refused (Date.parse rolls 2027-02-30 over to 2 March).
 */
function expiryOf(day: string): string | null {
  if (day === '') return null;
  const start = calendarDayStart(day);
  if (start === undefined) throw new DomainError('bad_request', 'expires_at must be a date', [{ field: 'expires_at', message: 'must be a date YYYY-MM-DD' }]);
  return new Date(start + 86_400_000).toISOString();
}

function maxPaymentsOf(raw: string): number | null {
  if (raw === '') return null;
  const n = /^[0-9]{1,7}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new DomainError('bad_request', 'max_payments must be at least 1', [{ field: 'max_payments', message: 'must be a whole number of at least 1' }]);
  return n;
}

/** Creates the link `linkId` (the form's claim id, form-once.ts: a claim taken over after a crash finds the link it made). */
export async function createLink(s: ApiServices, session: Session, requestId: string, linkId: string, f: LinkForm): Promise<string> {
  const { state } = await createPaymentLink(s, {
    linkId, merchantId: session.merchantId, amount: f.amount.trim(), currency: f.currency, description: f.description,
    customerId: null, expiresAt: expiryOf(f.expires.trim()), maxPayments: maxPaymentsOf(f.maxPayments.trim()), metadata: {},
  }, meta(session, requestId));
  return state.created!.payment_link_id;
}

export async function deactivateLink(s: ApiServices, session: Session, requestId: string, linkId: string): Promise<void> {
  await deactivatePaymentLink(s, { linkId, merchantId: session.merchantId }, meta(session, requestId));
}

/** A refused create in the page's language: by the form's field where the domain names one (its words are the API's, in English). */
export function linkRefusal(t: Translate, err: DomainError): string {
  const field = err.details?.[0]?.field;
  const key: MessageKey | undefined = field === undefined ? undefined : keyFor('dash.links.error.', field);
  if (key) return t(key);
  return err.code === 'amount_out_of_range' ? t('dash.links.error.amount') : errorText(t, err);
}
