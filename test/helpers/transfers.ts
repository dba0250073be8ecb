// Helpers for the transfer tests that run against a given test app (several apps per file: restarts).
import type { MerchantCreds, TestApp } from './app.ts';
import { waitUntil } from './wait.ts';

export type TransferMerchant = MerchantCreds & { customerId: string };

export async function transferMerchant(
  h: TestApp,
  opts: { corridors?: string[]; topUp?: Record<string, string>; webhookUrl?: string } = {},
): Promise<TransferMerchant> {
  const m = await h.newMerchant('Transfers');
  const routing = await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, { corridors: opts.corridors ?? ['CM-SN-XAF-XOF', 'SN-SN-XOF-XOF'] });
  if (routing.status !== 200) throw new Error(`routing ${routing.status} ${routing.text}`);
  for (const [currency, amount] of Object.entries(opts.topUp ?? { XOF: '100000' })) {
    const tu = await h.admin('POST', `/admin/merchants/${m.merchantId}/wallets/${currency}/top-ups`, { amount });
    if (tu.status !== 201) throw new Error(`top-up ${tu.status} ${tu.text}`);
  }
  const c = await h.as(m, 'POST', '/customers', { first_name: 'Awa', last_name: 'Diop' }, { idem: true });
  if (c.status !== 201) throw new Error(`customer ${c.status} ${c.text}`);
  return { ...m, customerId: c.body.id };
}

export async function newCustomerOf(h: TestApp, m: MerchantCreds, firstName = 'Fatou'): Promise<string> {
  const c = await h.as(m, 'POST', '/customers', { first_name: firstName, last_name: 'Sow' }, { idem: true });
  if (c.status !== 201) throw new Error(`customer ${c.status} ${c.text}`);
  return c.body.id;
}

export const payerCM = (phone = '+237670000001') => ({ country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone });
export const recipientSN = (phone = '+221770000001') => ({
  country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone, recipient_type: 'individual', first_name: 'Moussa', last_name: 'Ndiaye',
});

export async function transferQuote(h: TestApp, m: MerchantCreds, body: Record<string, unknown> = {}): Promise<any> {
  const q = await h.as(m, 'POST', '/quotes/transfer', {
    payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO', payin_currency: 'XAF', payout_currency: 'XOF', payin_amount: '10000', ...body,
  }, { idem: true });
  if (q.status !== 201) throw new Error(`quote ${q.status} ${q.text}`);
  return q.body;
}

/** POST /transfers from a fresh quote; answers the raw HTTP result. */
export async function postTransfer(
  h: TestApp,
  m: TransferMerchant,
  opts: { payer?: object; recipient?: object; quoteBody?: Record<string, unknown>; extra?: Record<string, unknown>; customerId?: string } = {},
) {
  const q = await transferQuote(h, m, opts.quoteBody);
  return h.as(m, 'POST', '/transfers', {
    quote_id: q.id, customer_id: opts.customerId ?? m.customerId, payer: opts.payer ?? payerCM(), recipient: opts.recipient ?? recipientSN(), ...opts.extra,
  }, { idem: true });
}

/** A created transfer's body (throws unless 201). */
export async function createTransfer(h: TestApp, m: TransferMerchant, opts: Parameters<typeof postTransfer>[2] = {}): Promise<any> {
  const r = await postTransfer(h, m, opts);
  if (r.status !== 201) throw new Error(`transfer ${r.status} ${r.text}`);
  return r.body;
}

/** Waits until `probe` answers something truthy (test/helpers/wait.ts: the bound is a safety net only). */
export const waitFor = waitUntil;

export const getTransfer = (h: TestApp, m: MerchantCreds, id: string) => h.as(m, 'GET', `/transfers/${id}`);

/** Waits until the transfer is completed or failed (or in `status`) and answers its body. */
export function settledTransfer(h: TestApp, m: MerchantCreds, id: string, status?: string): Promise<any> {
  return waitFor(`transfer ${id} ${status ?? 'terminal'}`, async () => {
    const r = await getTransfer(h, m, id);
    const s = r.body?.status;
    return (status ? s === status : s === 'completed' || s === 'failed') ? r.body : undefined;
  });
}

export async function walletsOf(h: TestApp, m: MerchantCreds): Promise<Record<string, { available: string; reserved: string }>> {
  const r = await h.as(m, 'GET', '/wallets');
  return Object.fromEntries(r.body.data.map((w: any) => [w.currency, w]));
}

/** The sandbox provider's legs of one transfer (its own books), by kind. */
export async function sandboxLegs(h: TestApp, transferId: string): Promise<Array<{ reference: string; kind: string; state: string; provider_reference: string; amount: string }>> {
  return h.app.services.knex('sandbox_provider_legs')
    .where('reference', 'like', `transfer:${transferId}:%`)
    .orderBy('reference')
    .select('reference', 'kind', 'state', 'provider_reference', 'amount');
}
