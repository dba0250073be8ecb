// A small HTTP client for setting up a bench run through the public APIs: merchants, API keys,
// customers, routing, top-ups and webhook URLs (the operator API takes the admin bearer token,
// the merchant API X-Api-Key / X-Api-Secret, as in test/helpers/app.ts).
import { randomUUID } from 'node:crypto';
import { ADMIN_TOKEN } from './service.ts';

export interface Merchant {
  merchantId: string;
  apiKey: string;
  apiSecret: string;
  customerId: string;
}

export async function call(base: string, method: string, p: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(base + p, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

export function admin(base: string, method: string, p: string, body?: unknown) {
  return call(base, method, p, body, { authorization: `Bearer ${ADMIN_TOKEN}` });
}

export const merchantHeaders = (m: Pick<Merchant, 'apiKey' | 'apiSecret'>) => ({ 'x-api-key': m.apiKey, 'x-api-secret': m.apiSecret });

export function asMerchant(base: string, m: Merchant, method: string, p: string, body?: unknown) {
  return call(base, method, p, body, { ...merchantHeaders(m), ...(method === 'POST' ? { 'idempotency-key': randomUUID() } : {}) });
}

function expect(r: { status: number; body: unknown }, status: number, what: string): any {
  if (r.status !== status) throw new Error(`${what}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** An active merchant with one API key and one customer; transfer corridors and top-ups when asked. */
export async function newMerchant(base: string, name: string, opts: { corridors?: string[]; topUp?: Record<string, string>; topUps?: number; webhookUrl?: string } = {}): Promise<Merchant> {
  const m = expect(await admin(base, 'POST', '/admin/merchants', { name }), 201, 'merchant');
  const k = expect(await admin(base, 'POST', `/admin/merchants/${m.id}/api-keys`, {}), 201, 'api key');
  if (opts.corridors) expect(await admin(base, 'PUT', `/admin/merchants/${m.id}/routing`, { corridors: opts.corridors }), 200, 'routing');
  for (const [currency, amount] of Object.entries(opts.topUp ?? {})) {
    // One top-up is at most 1,000,000: as many as asked.
    for (let i = 0; i < (opts.topUps ?? 1); i++) expect(await admin(base, 'POST', `/admin/merchants/${m.id}/wallets/${currency}/top-ups`, { amount }), 201, 'top-up');
  }
  if (opts.webhookUrl) expect(await admin(base, 'PUT', `/admin/merchants/${m.id}/webhook`, { url: opts.webhookUrl }), 200, 'webhook');
  const partial = { merchantId: m.id as string, apiKey: k.api_key as string, apiSecret: k.api_secret as string, customerId: '' };
  const c = expect(await asMerchant(base, partial, 'POST', '/customers', { first_name: 'Awa', last_name: 'Diop', phone: '+237670000001', country_code: 'CM' }), 201, 'customer');
  return { ...partial, customerId: c.id };
}

export const payinQuoteBody = { country_code: 'CM', operator_code: 'CM_MTN_MOMO', rail_type: 'mobile_money', send_amount: '5000', send_currency: 'XAF' };
export const payinBody = (quoteId: string, customerId: string) => ({
  quote_id: quoteId, customer_id: customerId,
  source: { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: '+237670000001' },
});

/** Quote then payin (the two calls payin-create measures), outside autocannon. */
export async function createPayin(base: string, m: Merchant): Promise<string> {
  const q = expect(await asMerchant(base, m, 'POST', '/quotes/payin', { customer_id: m.customerId, ...payinQuoteBody }), 201, 'payin quote');
  const p = expect(await asMerchant(base, m, 'POST', '/payins', payinBody(q.id, m.customerId)), 201, 'payin');
  return p.id as string;
}

export const TRANSFER_CORRIDORS = ['CM-SN-XAF-XOF'];
export const transferQuoteBody = { payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO', payin_currency: 'XAF', payout_currency: 'XOF', payin_amount: '1000' };
export const transferBody = (quoteId: string, customerId: string) => ({
  quote_id: quoteId, customer_id: customerId,
  payer: { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: '+237670000001' },
  recipient: { country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone: '+221770000001', recipient_type: 'individual', first_name: 'Moussa', last_name: 'Ndiaye' },
});
