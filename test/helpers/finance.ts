// A day of business for the finance tests (audit, statements, event history, metrics): top-ups,
// payins and payouts that complete and fail, transfers that complete, fail at collection, and are
// relaunched after a failed disbursement — every kind of ledger movement, through the public API.
// And a runner for the operator CLIs.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MerchantCreds, TestApp } from './app.ts';
import { leg, newCustomer, party, quote, settled, topUp, until } from './money.ts';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const recipientSN = (phone = '+221770000001') => ({
  country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone, recipient_type: 'individual',
  first_name: 'Awa', last_name: 'Ndiaye',
});
export const payerCM = (phone = '+237670000001') => ({ country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone });

export interface Business {
  m: MerchantCreds;
  customer: string;
  payins: { completed: string; failed: string; xof: string };
  payouts: { completed: string; failed: string };
  transfers: { completed: string; collectionFailed: string; relaunched: string };
}

async function ok(what: string, r: { status: number; text: string; body: any }, status = 201): Promise<any> {
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r.body;
}

async function transfer(h: TestApp, m: MerchantCreds, customer: string, payer = payerCM(), recipient = recipientSN()): Promise<string> {
  const q = await ok('transfer quote', await h.as(m, 'POST', '/quotes/transfer', {
    payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO', payin_currency: 'XAF', payout_currency: 'XOF', payin_amount: '10000',
  }, { idem: true }));
  const t = await ok('transfer', await h.as(m, 'POST', '/transfers', { quote_id: q.id, customer_id: customer, payer, recipient }, { idem: true }));
  return t.id as string;
}

const transferDone = (h: TestApp, m: MerchantCreds, id: string) =>
  until(`transfer ${id} terminal`, async () => {
    const r = await h.as(m, 'GET', `/transfers/${id}`);
    return ['completed', 'failed'].includes(r.body?.status) ? r.body : undefined;
  });

export async function businessDay(h: TestApp, name = 'Finance'): Promise<Business> {
  const m = await h.newMerchant(name);
  await ok('routing', await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, { corridors: ['CM-SN-XAF-XOF'] }), 200);
  await topUp(h, m, 'XOF', '100000');
  await topUp(h, m, 'XAF', '20000');
  const customer = await newCustomer(h, m);

  const payin = async (operator: string, country: string, currency: string, amount: string, phone: string) => {
    const q = await quote(h, m, 'payin', { customer_id: customer, ...leg(operator, country, currency, amount) });
    const p = await ok('payin', await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party(country, operator, phone) }, { idem: true }));
    return p.id as string;
  };
  const payout = async (amount: string, phone: string) => {
    const q = await quote(h, m, 'payout', { customer_id: customer, ...leg('SN_WAVE_MOMO', 'SN', 'XOF', amount) });
    const p = await ok('payout', await h.as(m, 'POST', '/payouts', {
      quote_id: q.id, customer_id: customer, payment_reason_text: 'Invoice', recipient: recipientSN(phone),
    }, { idem: true }));
    return p.id as string;
  };

  const payins = {
    completed: await payin('CM_MTN_MOMO', 'CM', 'XAF', '5000', '+237670000001'),
    failed: await payin('CM_MTN_MOMO', 'CM', 'XAF', '3000', '+237670000099'),
    xof: await payin('SN_WAVE_MOMO', 'SN', 'XOF', '7000', '+221770000002'),
  };
  const payouts = { completed: await payout('10000', '+221770000003'), failed: await payout('4000', '+221770000099') };
  const transfers = {
    completed: await transfer(h, m, customer),
    collectionFailed: await transfer(h, m, customer, payerCM('+237670000099')),
    relaunched: await transfer(h, m, customer, payerCM(), recipientSN('+221770000099')),
  };
  for (const id of Object.values(payins)) await settled(h, m, 'payins', id);
  for (const id of Object.values(payouts)) await settled(h, m, 'payouts', id);
  for (const id of Object.values(transfers)) await transferDone(h, m, id);
  // The disbursement that failed is relaunched to a recipient that gets paid.
  await ok('relaunch', await h.as(m, 'POST', `/transfers/${transfers.relaunched}/relaunch-payout`, { recipient: recipientSN('+221770000004') }, { idem: true }), 200);
  await transferDone(h, m, transfers.relaunched);
  const s = h.app.services;
  await s.awaitReadModels(await s.store.head());
  return { m, customer, payins, payouts, transfers };
}

export interface Run { code: number | null; stdout: string; stderr: string }

/** Runs `cli/<name>.ts` with the given arguments and environment. */
export function cli(name: string, args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, `cli/${name}.ts`), ...args], {
      cwd: root, env: { ...process.env, LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Prometheus exposition text → value of each series `name{labels}` (labels as written, sorted). */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = m[3] ? [...m[3].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((x) => `${x[1]}="${x[2]}"`).sort().join(',') : '';
    out.set(labels ? `${m[1]}{${labels}}` : m[1]!, Number(m[4]));
  }
  return out;
}

/** `series('http_requests_total', {route: '/x', status: '200'})` → the key parseMetrics uses. */
export function series(name: string, labels: Record<string, string> = {}): string {
  const l = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).sort().join(',');
  return l ? `${name}{${l}}` : name;
}
