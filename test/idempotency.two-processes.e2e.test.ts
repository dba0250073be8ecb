// Issue 28, reproduced with two service instances on one PostgreSQL database (each its own pool,
// caches and in-process locks, as two API processes) and the `events` table locked from a third
// connection, so that a request blocks in its append for as long as the test wants:
//  - a request blocked in its append keeps its claim (it renews the lease): the same request sent to
//    the other process is told "in progress", not taken over;
//  - a claim taken over (its holder could not renew) is fenced: the holder it was taken from can no
//    longer store an outcome, the taker's failure (a cut connection) cannot delete the key, and the
//    next retry answers the one resource that committed, never a second one;
//  - a commit in doubt on one process is answered, on the other, with what committed (a replay),
//    and its sealed OTP reaches the provider;
//  - a take-over whose append fails for certain deletes only its own sealed OTP, never the one the
//    original, still-running request's payin needs.
// Both processes run on one manual clock: a lease lapses when the test moves the clock past it (never
// because a loaded machine ran a renewal late), and the sandbox settles legs at once (no settle time).
import t, { type Test } from 'tap';
import pg from 'pg';
import { loadConfig } from '../infra/config.ts';
import { startApp, type RunningApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { ManualClock } from '../infra/clock.ts';
import { WrongExpectedVersion } from '../infra/eventstore/types.ts';
import type { Services } from '../commands/services.ts';
import { startTestApp, request, ADMIN_TOKEN, type MerchantCreds, type TestApp } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, topUp, until, wallet } from './helpers/money.ts';
import { recipientSN } from './helpers/transfers.ts';

const LEASE_MS = 900;
const env = { IDEMPOTENCY_LEASE_MS: String(LEASE_MS), SANDBOX_SETTLE_MS: '0' };
const clock = new ManualClock();

{
  const h = await startTestApp({ env, clock });
  const second: RunningApp = await startApp({
    config: {
      ...loadConfig({ ADMIN_TOKEN, DATA_DIR: h.dataDir, LOG_LEVEL: 'silent', ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000', ...env }, []),
      databaseUrl: h.database.url,
    },
    log: createLogger('silent'),
    port: 0,
    clock,
  });
  t.teardown(async () => {
    await second.stop();
    await h.stop();
  });
  await scenarios(h, second);
}

/**
 * Holds `LOCK TABLE events IN EXCLUSIVE MODE` (reads go on, appends wait) until `release()` (at the
 * test's end at the latest). The first append waits on the table, the next ones on the append's
 * advisory lock that the first holds.
 */
async function lockEvents(t: Test, url: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('BEGIN');
  await c.query('LOCK TABLE events IN EXCLUSIVE MODE');
  let held = true;
  const release = async () => {
    if (!held) return;
    held = false;
    await c.query('COMMIT');
    await c.end();
  };
  t.teardown(release);
  const waiting = async () => Number((await c.query(
    `SELECT count(*)::int AS n FROM pg_locks
      WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)).rows[0].n);
  return {
    /** Until `n` appends wait. */
    waitFor: (n: number) => until(`${n} appends waiting on the lock`, async () => (await waiting()) >= n),
    release,
  };
}

function replaceAppend(services: Services, fail: () => Error | undefined): () => void {
  const store = services.store;
  const original = store.append;
  store.append = async (appends, opts) => {
    const err = fail();
    if (err) throw err;
    return original.call(store, appends, opts);
  };
  return () => { store.append = original; };
}

/** The holder's renewals stop reaching the database (a process paused, or cut off from it). */
function stopRenewals(services: Services): () => void {
  const store = services.idempotency;
  const original = store.renew;
  store.renew = async () => true;
  return () => { store.renew = original; };
}

async function scenarios(h: TestApp, second: RunningApp): Promise<void> {
  const as = (url: string | undefined, m: MerchantCreds, p: string, body: unknown, key: string) =>
    request(url!, 'POST', p, { body, headers: { 'x-api-key': m.apiKey, 'x-api-secret': m.apiSecret, 'idempotency-key': key } });
  const s = h.app.services;
  const lockedUntil = async (m: MerchantCreds, key: string) =>
    new Date((await s.knex('idempotency_keys').where({ merchant_id: m.merchantId, key }).first('locked_until')).locked_until).getTime();
  const count = async (table: string, m: MerchantCreds) => Number((await s.knex(table).where({ merchant_id: m.merchantId }).count<Array<{ n: string }>>('* as n'))[0]!.n);

  async function payoutSetup(name: string) {
    const m = await h.newMerchant(name);
    await topUp(h, m, 'XOF', '20000');
    const customer = await newCustomer(h, m, 'SN', '+221770000001');
    const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000'));
    return { m, body: { quote_id: q.id, customer_id: customer, payment_reason_text: 'two processes', recipient: recipientSN('+221770000098') } };
  }

  t.test('a request blocked in its append renews its claim: the same request on the other process is in progress', async (t) => {
    const { m, body } = await payoutSetup('Renewed');
    const lock = await lockEvents(t, h.database.url!);
    const a = as(h.url, m, '/payouts', body, 'renewed');
    await lock.waitFor(1);
    clock.advance(3 * LEASE_MS); // three leases later: held only if the holder renews it
    await until('the holder to renew its lease', async () => (await lockedUntil(m, 'renewed')) > clock.now().getTime());
    const b = await as(second.url!, m, '/payouts', body, 'renewed');
    t.equal(b.status, 409, 'three leases later, still held');
    t.equal(b.body.error.code, 'idempotency_in_progress');
    await lock.release();
    const first = await a;
    t.equal(first.status, 201);
    const replay = await as(second.url!, m, '/payouts', body, 'renewed');
    t.equal(replay.body.id, first.body.id, 'replayed on the other process');
    t.equal(replay.body._meta.idempotency_replayed, true);
    t.equal(await count('payouts', m), 1);
  });

  t.test('a claim taken over is fenced: the taker\'s cut connection cannot free the key, and every answer names one payout', async (t) => {
    const { m, body } = await payoutSetup('Fenced');
    const lock = await lockEvents(t, h.database.url!);
    const renewing = stopRenewals(s);
    t.teardown(renewing);
    const a = as(h.url, m, '/payouts', body, 'fenced'); // process 1: blocks in its append
    await lock.waitFor(1);
    clock.advance(LEASE_MS + 1); // its lease lapses
    // Process 2 takes the claim over, and its database connection is cut in the append.
    const cut = replaceAppend(second.services, () => Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' }));
    const b = await as(second.url!, m, '/payouts', body, 'fenced');
    cut();
    t.equal(b.status, 503, 'the taker failed with the connection');
    const row = await s.knex('idempotency_keys').where({ merchant_id: m.merchantId, key: 'fenced' }).first();
    t.match(row, { state: 'in_progress' }, 'the key was not deleted: its resource id stays');
    // The same request again, on process 2: it takes the key over and blocks too.
    const c = as(second.url!, m, '/payouts', body, 'fenced');
    await lock.waitFor(2);
    await lock.release();
    const [first, third] = await Promise.all([a, c]);
    renewing();
    t.equal(third.status, 201, `the retry answers a payout, not quote_not_active (${third.text.slice(0, 120)})`);
    t.equal(third.body.id, row.resource_id, 'under the key\'s resource id');
    // Process 1's request was taken over while it ran: it answers what the key holds (the taker's
    // payout, replayed), or 409 while the taker still runs, never an answer of its own (issue 40.6).
    t.ok(first.status === 409 ? first.body.error.code === 'idempotency_in_progress' : first.status === 201 && first.body.id === third.body.id,
      `process 1 answers the key's answer or "in progress" (${first.status} ${first.text.slice(0, 120)})`);
    const last = await as(h.url, m, '/payouts', body, 'fenced');
    t.equal(last.body.id, third.body.id, 'the stored answer names it too');
    t.equal(last.body._meta.idempotency_replayed, true);
    t.equal(await count('payouts', m), 1, 'one payout');
    t.match(await wallet(h, m, 'XOF'), { available: '15000', reserved: '5000' }, 'one hold');
  });

  t.test('a commit in doubt on one process (the connection cut after PostgreSQL committed): the retry on the other answers that payin, and its OTP reaches the provider', async (t) => {
    const m = await h.newMerchant('InDoubtTwoProcesses');
    const customer = await newCustomer(h, m, 'SN', '+221770000001');
    const q = await quote(h, m, 'payin', leg('SN_ORANGE_MOMO', 'SN', 'XOF', '5000'));
    const body = { quote_id: q.id, customer_id: customer, source: party('SN', 'SN_ORANGE_MOMO', '+221770000001'), otp: '482913' };
    // Process 1's append commits, then its connection drops before the answer arrives.
    const store = s.store;
    const original = store.append;
    store.append = async (appends, opts) => {
      const result = await original.call(store, appends, opts);
      if (!appends.some((a) => a.events.some((e) => e.type === 'payin.created'))) return result; // a worker's
      store.append = original;
      throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    };
    t.teardown(() => { store.append = original; });
    const first = await as(h.url, m, '/payins', body, 'in-doubt-two');
    t.equal(first.status, 503, 'in doubt: 503');
    const retry = await as(second.url!, m, '/payins', body, 'in-doubt-two');
    t.equal(retry.status, 201, `the other process answers what committed (${retry.text.slice(0, 120)})`);
    t.equal(retry.body._meta.idempotency_replayed, true, 'as a replay');
    t.equal(await count('payins', m), 1, 'one payin');
    const done = await settled(h, m, 'payins', retry.body.id);
    t.equal(done.status, 'completed', `collected with its OTP (${done.failure_reason ?? ''})`);
    t.equal(Number((await s.knex('otp_vault').where({ reference: retry.body.id }).count<Array<{ n: string }>>('* as n'))[0]!.n), 0, 'then gone');
  });

  t.test('a take-over that fails for certain keeps the OTP of the payin the original request commits', async (t) => {
    const m = await h.newMerchant('OtpTakeOver');
    const customer = await newCustomer(h, m, 'SN', '+221770000001');
    const q = await quote(h, m, 'payin', leg('SN_ORANGE_MOMO', 'SN', 'XOF', '5000'));
    const body = { quote_id: q.id, customer_id: customer, source: party('SN', 'SN_ORANGE_MOMO', '+221770000001'), otp: '482913' };
    const lock = await lockEvents(t, h.database.url!);
    const renewing = stopRenewals(s);
    t.teardown(renewing);
    const a = as(h.url, m, '/payins', body, 'otp-take-over');
    await lock.waitFor(1);
    clock.advance(LEASE_MS + 1); // its lease lapses
    // Process 2 takes over, seals the OTP, and every append it tries loses its race: a 5xx.
    const lose = replaceAppend(second.services, () => new WrongExpectedVersion('payin', 0, 1));
    const b = await as(second.url!, m, '/payins', body, 'otp-take-over');
    lose();
    t.equal(b.status, 500, 'the take-over failed');
    await lock.release();
    const first = await a;
    renewing();
    // Taken over while it ran, the original request answers what the key holds, or 409 while no
    // attempt has stored an outcome (issue 40.6); its payin committed all the same.
    t.ok(first.status === 409 || first.status === 201, `the original request answers the key's answer or "in progress" (${first.status})`);
    const retry = await as(second.url!, m, '/payins', body, 'otp-take-over');
    t.equal(retry.status, 201, 'a retry answers the payin the original request committed');
    if (first.status === 201) t.equal(first.body.id, retry.body.id, 'the same payin');
    const done = await settled(h, m, 'payins', retry.body.id);
    t.equal(done.status, 'completed', `collected with its OTP (${done.failure_reason ?? ''})`);
    t.equal(Number((await s.knex('otp_vault').where({ reference: retry.body.id }).count<Array<{ n: string }>>('* as n'))[0]!.n), 0, 'then gone');
    t.equal(await count('payins', m), 1);
  });
}
