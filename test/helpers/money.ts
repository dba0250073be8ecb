// Helpers for the money-core API tests: customers, quotes, top-ups, waiting for the gateway.
import type { MerchantCreds, TestApp } from './app.ts';
import { waitUntil } from './wait.ts';

export async function newCustomer(h: TestApp, m: MerchantCreds, country = 'CM', phone = '+237670000001'): Promise<string> {
  const c = await h.as(m, 'POST', '/customers', { first_name: 'Ama', last_name: 'Test', phone, country_code: country }, { idem: true });
  if (c.status !== 201) throw new Error(`customer create failed: ${c.status} ${c.text}`);
  return c.body.id as string;
}

export const leg = (operator: string, country: string, currency: string, amount: string) => ({
  country_code: country, operator_code: operator, rail_type: 'mobile_money', send_amount: amount, send_currency: currency,
});

export async function quote(h: TestApp, m: MerchantCreds, flow: 'payin' | 'payout', body: Record<string, unknown>): Promise<any> {
  const q = await h.as(m, 'POST', `/quotes/${flow}`, body, { idem: true });
  if (q.status !== 201) throw new Error(`quote failed: ${q.status} ${q.text}`);
  return q.body;
}

export async function topUp(h: TestApp, m: MerchantCreds, currency: string, amount: string): Promise<void> {
  const r = await h.admin('POST', `/admin/merchants/${m.merchantId}/wallets/${currency}/top-ups`, { amount });
  if (r.status !== 201) throw new Error(`top-up failed: ${r.status} ${r.text}`);
}

export async function wallet(h: TestApp, m: MerchantCreds, currency: string): Promise<{ available: string; reserved: string }> {
  const w = await h.as(m, 'GET', '/wallets');
  return w.body.data.find((x: { currency: string }) => x.currency === currency);
}

export const party = (country: string, operator: string, phone: string) => ({ country_code: country, rail_type: 'mobile_money', operator_code: operator, phone });

/** Waits until `probe` answers something truthy (test/helpers/wait.ts: the bound is a safety net only). */
export const until = waitUntil;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the payment reaches a terminal status (or `status`). */
/** A CM payin of 5000 XAF from `payer` per phone (one ending 99 fails at the sandbox), each waited for until terminal. */
export async function settledPayins(h: TestApp, m: MerchantCreds, payer: string, phones = ['+237670000001', '+237670000099']): Promise<string[]> {
  const ids: string[] = [];
  for (const phone of phones) {
    const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
    const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: payer, source: party('CM', 'CM_MTN_MOMO', phone) }, { idem: true });
    if (p.status !== 201) throw new Error(`payin failed: ${p.status} ${p.text}`);
    await settled(h, m, 'payins', p.body.id);
    ids.push(p.body.id);
  }
  return ids;
}

export async function settled(h: TestApp, m: MerchantCreds, kind: 'payins' | 'payouts', id: string, status?: string): Promise<any> {
  return until(`${kind}/${id} ${status ?? 'terminal'}`, async () => {
    const r = await h.as(m, 'GET', `/${kind}/${id}`);
    const s = r.body?.status;
    return (status ? s === status : s === 'completed' || s === 'failed') ? r.body : undefined;
  });
}
