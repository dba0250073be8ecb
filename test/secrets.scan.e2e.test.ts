// Secrets at rest and in logs (issue 9 point 7): a workload issues API secrets (created, rotated,
// revoked), webhook signing secrets (set, rotated), OTPs (payins and transfers collected from
// operators that need one) and runs transfers and webhook deliveries, with every log line captured
// at the most verbose level. Then every text, json and bytea column of every table of the database
// and every event payload of the event store are searched for each secret issued, as a whole token:
// none may be there in clear (API secrets are kept as keyed hashes, signing secrets and OTPs
// sealed; see infra/secrets.ts and infra/otp-vault.ts). The logs carry none of them either,
// nor a full API key or the operator token. Nor any form an OTP can be recovered from by trying its
// 10^4 to 10^8 values: its hash, or an unkeyed hash of a request that carried it (the idempotency
// store keeps request fingerprints as HMACs under the server key: CONTRACT §17).
import t from 'tap';
import { logLines } from './helpers/log-lines.ts';
import { createHash } from 'node:crypto';
import { unkeyedRequestHash } from '../commands/idempotency.ts';
import { startTestApp, caughtUp, ADMIN_TOKEN, type MerchantCreds } from './helpers/app.ts';
import { dbLabel } from './helpers/db.ts';
import { leg, party, quote, settled } from './helpers/money.ts';
import { transferMerchant, transferQuote, recipientSN, settledTransfer } from './helpers/transfers.ts';
import { startReceiver, configureWebhook, until, deliveriesIdle } from './helpers/webhooks.ts';

const { stream: logStream, lines } = logLines();

const h = await startTestApp({ env: { LOG_LEVEL: 'trace' }, logStream });
const rx = await startReceiver();
t.teardown(async () => {
  await h.stop();
  await rx.close();
});
const s = h.app.services;

/** Distinctive OTPs (8 digits, unlike any id or timestamp fragment a run produces by chance). */
const OTPS = ['73915284', '48206157', '91827364', '60417395'];
const secrets = new Map<string, string>(); // value → what it is
const keys = new Map<string, string>(); // full API keys: never logged (they are stored: they are looked up)
/** Every request that carried an OTP: an unkeyed hash of it would give the OTP back in at most 10^8 tries. */
const otpRequests: Array<{ path: string; body: Record<string, unknown> }> = [];

/** The forms an OTP could be recovered from: its SHA-256, base64, and the unkeyed fingerprint of each request that carried it. */
function derivedForms(otp: string): Array<[string, string]> {
  const forms: Array<[string, string]> = [
    [createHash('sha256').update(otp).digest('hex'), 'SHA-256 of an OTP'],
    [Buffer.from(otp).toString('base64'), 'base64 of an OTP'],
  ];
  for (const r of otpRequests.filter((x) => x.body.otp === otp)) {
    forms.push([unkeyedRequestHash('POST', r.path, r.body), `unkeyed request hash of a ${r.path} carrying an OTP`]);
  }
  return forms;
}

t.test('workload: keys, webhook secrets, OTP payins and transfers', async (t) => {
  const m = await transferMerchant(h, { corridors: ['SN-SN-XOF-XOF', 'CM-SN-XAF-XOF'], topUp: { XOF: '200000' } });
  secrets.set(m.apiSecret, 'api secret');
  keys.set(m.apiKey, 'api key');
  const second = await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys`, {});
  secrets.set(second.body.api_secret, 'second api secret');
  keys.set(second.body.api_key, 'second api key');
  const rotated = await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys/${second.body.id}/rotate`, { grace_seconds: 60 });
  t.equal(rotated.status, 201);
  secrets.set(rotated.body.api_secret, 'rotated api secret');
  const third = await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys`, {});
  secrets.set(third.body.api_secret, 'revoked api secret');
  keys.set(third.body.api_key, 'revoked api key');
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/api-keys/${third.body.id}/revoke`)).status, 200);
  t.equal((await h.as({ ...m, apiKey: third.body.api_key, apiSecret: third.body.api_secret }, 'GET', '/wallets')).status, 401, 'a revoked key tried');
  t.equal((await h.as({ ...m, apiSecret: `${m.apiSecret}x` }, 'GET', '/wallets')).status, 401, 'a wrong secret tried');

  secrets.set(await configureWebhook(h, m, rx.url), 'signing secret');
  secrets.set(await configureWebhook(h, m, `${rx.url}/second`), 'second signing secret');
  const rotatedHook = await h.admin('POST', `/admin/merchants/${m.merchantId}/webhook/rotate-secret`);
  if (rotatedHook.status === 200 || rotatedHook.status === 201) {
    for (const [k, v] of Object.entries(rotatedHook.body)) if (/secret/.test(k) && typeof v === 'string') secrets.set(v, `rotated signing secret (${k})`);
  }
  t.ok([...secrets.values()].some((v) => v.startsWith('rotated signing secret')), `webhook secret rotated (${rotatedHook.status})`);

  // Payins collected with an OTP (SN and CI Orange), one refused without, one with the failing 000000.
  const customer = m.customerId;
  const otpPayin = async (m: MerchantCreds, operator: string, country: string, phone: string, otp?: string) => {
    const q = await quote(h, m, 'payin', leg(operator, country, 'XOF', '5000'));
    const body = { quote_id: q.id, customer_id: customer, source: party(country, operator, phone), ...(otp ? { otp } : {}) };
    if (otp) otpRequests.push({ path: '/payins', body });
    return h.as(m, 'POST', '/payins', body, { idem: true });
  };
  const p1 = await otpPayin(m, 'SN_ORANGE_MOMO', 'SN', '+221770000001', OTPS[0]);
  const p2 = await otpPayin(m, 'CI_ORANGE_MOMO', 'CI', '+2250701020304', OTPS[1]);
  t.equal((await otpPayin(m, 'SN_ORANGE_MOMO', 'SN', '+221770000001')).body.error?.code, 'otp_required');
  for (const [o, v] of [[0, OTPS[0]], [1, OTPS[1]]] as const) secrets.set(v!, `payin OTP ${o + 1}`);
  t.equal((await settled(h, m, 'payins', p1.body.id)).status, 'completed');
  t.equal((await settled(h, m, 'payins', p2.body.id)).status, 'completed');

  // Transfers collected from an Orange payer with an OTP, one completing, one whose disbursement fails and is relaunched.
  const transferWithOtp = async (otp: string, recipientPhone: string) => {
    const q = await transferQuote(h, m, { payer_operator_code: 'SN_ORANGE_MOMO', recipient_operator_code: 'SN_WAVE_MOMO', payin_currency: 'XOF', payout_currency: 'XOF' });
    const body = { quote_id: q.id, customer_id: customer, payer: party('SN', 'SN_ORANGE_MOMO', '+221770000002'), recipient: recipientSN(recipientPhone), otp };
    otpRequests.push({ path: '/transfers', body });
    const r = await h.as(m, 'POST', '/transfers', body, { idem: true });
    t.equal(r.status, 201, r.text.slice(0, 300));
    secrets.set(otp, 'transfer OTP');
    return r.body.id as string;
  };
  const t1 = await transferWithOtp(OTPS[2]!, '+221770000001');
  const t2 = await transferWithOtp(OTPS[3]!, '+221770000099');
  t.equal((await settledTransfer(h, m, t1)).status, 'completed');
  t.equal((await settledTransfer(h, m, t2)).status, 'failed');
  t.equal((await h.as(m, 'POST', `/transfers/${t2}/relaunch-payout`, { recipient: recipientSN('+221770000003') }, { idem: true })).status, 200);
  t.equal((await settledTransfer(h, m, t2, 'completed')).status, 'completed');
  await until(() => rx.deliveries.length >= 6, 'webhooks delivered');
  secrets.set(ADMIN_TOKEN, 'operator token');
  for (const otp of OTPS) for (const [form, what] of derivedForms(otp)) secrets.set(form, what);
  t.equal(otpRequests.length, 4, 'every OTP request kept for the derived forms');
});

/** `value` as a whole token of `text` (not inside a longer run of id characters). */
function containsToken(text: string, value: string): boolean {
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![A-Za-z0-9_-])${escaped}(?![A-Za-z0-9_-])`).test(text);
}

t.test('no secret in clear in the database, the event store or the logs', async (t) => {
  // Everything the workers write about what happened so far is written (and logged) before the scan.
  await caughtUp(h);
  await deliveriesIdle(h);
  const columns = await s.knex('information_schema.columns')
    .where({ table_schema: 'public' })
    .whereIn('data_type', ['text', 'character varying', 'character', 'json', 'jsonb', 'bytea', 'ARRAY', 'USER-DEFINED'])
    .select('table_name', 'column_name', 'data_type');
  let rows = 0;
  let values = 0;
  const found: string[] = [];
  const keysSeen = new Set<string>(); // control: full API keys are stored (they are looked up), so the scan must see them
  const tables = [...new Set(columns.map((c: any) => c.table_name as string))];
  for (const table of tables) {
    const cols = columns.filter((c: any) => c.table_name === table).map((c: any) => c.column_name as string);
    const result = await s.knex.raw(`SELECT ${cols.map((c) => `"${c}"`).join(', ')} FROM "${table}"`);
    const list = (result.rows ?? result) as Array<Record<string, unknown>>;
    rows += list.length;
    for (const row of list) {
      for (const [col, v] of Object.entries(row)) {
        if (v === null || v === undefined) continue;
        values++;
        const texts = Buffer.isBuffer(v) || v instanceof Uint8Array ? [Buffer.from(v).toString('utf8'), Buffer.from(v).toString('latin1')] : [typeof v === 'string' ? v : JSON.stringify(v)];
        for (const [secret, what] of secrets) if (texts.some((x) => containsToken(x, secret))) found.push(`${what} in ${table}.${col}`);
        for (const key of keys.keys()) if (texts.some((x) => containsToken(x, key))) keysSeen.add(`${table}.${col}`);
      }
    }
  }
  // The event store through its own interface (the same table on PostgreSQL; KurrentDB otherwise).
  let events = 0;
  for (let after = 0n; ;) {
    const batch = await s.store.readAll(after, 500);
    if (batch.length === 0) break;
    for (const e of batch) {
      events++;
      const text = JSON.stringify({ data: e.data, metadata: e.metadata });
      for (const [secret, what] of secrets) if (containsToken(text, secret)) found.push(`${what} in event ${e.type}`);
    }
    after = batch[batch.length - 1]!.position;
  }
  const log = lines.join('\n');
  for (const [secret, what] of [...secrets, ...keys]) if (containsToken(log, secret)) found.push(`${what} in the logs`);

  t.ok(tables.length >= 15 && rows > 50 && events > 50 && lines.length >= 30, 'the scan saw the data');
  t.ok(keysSeen.has('api_keys.api_key'), 'control: the scan finds the API keys where they are stored');
  t.ok(tables.includes('otp_vault') && tables.includes('api_keys') && tables.includes('merchants'), 'including where the secrets are kept sealed');
  t.same(found, [], 'no secret in clear');
  t.comment(`secrets scan (${dbLabel}): ${rows} rows (${values} values in ${tables.length} tables), ${events} events, ${lines.length} log lines, ` +
    `${secrets.size} secrets and ${keys.size} API keys searched, secrets found=${found.length}`);
});
