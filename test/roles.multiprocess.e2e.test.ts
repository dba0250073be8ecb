// Issue 7, point 3: two API processes and two worker processes (`npm start -- --role api|worker`)
// against one PostgreSQL and one NATS take 200 payins and 50 transfers through both APIs while one
// worker is killed with SIGKILL mid-run. Then: every payment settled once (one provider leg per
// collection and per disbursement, one terminal event per stream), every webhook event recorded
// once and delivered, and the ledger balances (each wallet equals the sum of what settled).
import t, { type Test } from 'tap';

import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { freshDatabaseUrl } from './helpers/db.ts';
import { request } from './helpers/app.ts';
import { freePort } from './helpers/net.ts';
import { waitUntil } from './helpers/wait.ts';

const PAYINS = 200;
const TRANSFERS = 50;
const CONCURRENCY = 16;
const ADMIN = 'multi-process-admin-token';

const DATABASE_URL = process.env.DATABASE_URL;
const NATS_URL = process.env.NATS_URL;
if (!DATABASE_URL || !NATS_URL) {
  t.skip('DATABASE_URL and NATS_URL not set: the multi-process test runs two API and two worker processes on real PostgreSQL and NATS', () => {});
} else {
  t.setTimeout(300_000); // the whole file: four processes, 250 payments, a kill and its recovery
  t.test('2 API + 2 worker processes, 200 payins and 50 transfers, one worker killed mid-run', (t) => run(t, NATS_URL));
}

/** On a failure, what the processes said helps more than the stack. */
function dump(procs: Proc[]): string {
  return procs.map((p) => `--- ${p.name} (exit ${p.child.exitCode ?? p.child.signalCode ?? 'running'})\n${p.log.join('').slice(-4000)}`).join('\n');
}



interface Proc { name: string; child: ChildProcess; url: string; exited: Promise<void>; log: string[] }

async function run(t: Test, natsUrl: string): Promise<void> {
  t.setTimeout(300_000);
  const db = await freshDatabaseUrl();
  const prefix = `mp${randomBytes(4).toString('hex')}`;
  const root = path.resolve(import.meta.dirname, '..');
  const procs: Proc[] = [];

  // The merchant's webhook receiver: records every delivery, answers 200.
  const received: Array<{ id: string; event: string }> = [];
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const parsed = JSON.parse(body) as { id: string; event: string };
      received.push({ id: parsed.id, event: parsed.event });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/hooks`;

  t.teardown(async () => {
    for (const p of procs) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    receiver.close();
    await db.drop();
    const nc = await connect({ servers: natsUrl });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(`${prefix}_bus`).catch(() => false);
    await nc.close();
  });

  const secretKey = randomBytes(32).toString('base64url');
  async function start(name: string, role: 'api' | 'worker'): Promise<Proc> {
    const port = await freePort();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `mp-${name}-`));
    const child = spawn(process.execPath, ['--import', 'tsx', 'app/main.ts', '--role', role], {
      cwd: root,
      env: {
        PATH: process.env.PATH, HOME: process.env.HOME,
        DATABASE_URL: db.url, NATS_URL: natsUrl, NATS_PREFIX: prefix,
        ADMIN_TOKEN: ADMIN, SECRET_HASH_KEY: secretKey, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1',
        SANDBOX_SETTLE_MS: '100', ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1',
        BUS_ACK_WAIT_MS: '3000', JOB_LEASE_MS: '3000', LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log: string[] = [];
    const keep = (chunk: Buffer) => { log.push(chunk.toString()); if (log.length > 200) log.shift(); };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const exited = new Promise<void>((r) => child.once('exit', () => { fs.rmSync(dataDir, { recursive: true, force: true }); r(); }));
    const p: Proc = { name, child, url: `http://127.0.0.1:${port}`, exited, log };
    procs.push(p);
    return p;
  }

  // All four start together, as a deployment's processes would (migrations take turns).
  const [api1, api2, worker1, worker2] = await Promise.all([
    start('api1', 'api'), start('api2', 'api'), start('worker1', 'worker'), start('worker2', 'worker'),
  ]);
  for (const a of [api1!, api2!, worker1!, worker2!]) {
    const until = Date.now() + 60_000;
    for (;;) {
      const r = await request(a.url!, 'GET', '/readyz').catch(() => undefined);
      if (r?.status === 200) break;
      if (Date.now() > until || a.child.exitCode !== null) throw new Error(`${a.name} not ready:\n${a.log.join('')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const apis = [api1!.url!, api2!.url!];
  // A worker answers health checks only; the merchant and operator APIs are the api role's.
  t.equal((await request(worker2!.url!, 'GET', '/customers')).status, 404, 'a worker serves no merchant API');
  t.equal((await request(worker2!.url!, 'GET', '/admin/merchants/00000000-0000-4000-8000-000000000000', { headers: { authorization: `Bearer ${ADMIN}` } })).status, 404, 'nor the operator API');
  try {
    await load();
  } catch (err) {
    t.fail(`${(err as Error).message}\n${dump(procs)}`);
  }

  async function load(): Promise<void> {

  const admin = (method: string, p: string, body?: unknown) => request(apis[0]!, method, p, { body, headers: { authorization: `Bearer ${ADMIN}` } });
  const merchant = (await admin('POST', '/admin/merchants', { name: 'Multi' })).body;
  const key = (await admin('POST', `/admin/merchants/${merchant.id}/api-keys`, {})).body;
  t.equal((await admin('PUT', `/admin/merchants/${merchant.id}/webhook`, { url: hookUrl })).status, 200);
  t.equal((await admin('PUT', `/admin/merchants/${merchant.id}/routing`, { corridors: ['CM-SN-XAF-XOF'] })).status, 200);
  for (let i = 0; i < 2; i++) t.equal((await admin('POST', `/admin/merchants/${merchant.id}/wallets/XOF/top-ups`, { amount: '1000000' })).status, 201);
  let n = 0;
  const as = (method: string, p: string, body?: unknown) => {
    const headers: Record<string, string> = { 'x-api-key': key.api_key, 'x-api-secret': key.api_secret };
    if (method === 'POST') headers['idempotency-key'] = randomBytes(8).toString('hex');
    return request(apis[n++ % 2]!, method, p, { body, headers });
  };
  const customer = (await as('POST', '/customers', { first_name: 'Awa', last_name: 'Diop', country_code: 'CM' })).body;

  // One payin in 20 fails at the provider (phone ending 99), so both terminal states are exercised.
  const phone = (i: number) => `+2376700${i % 20 === 0 ? "10099" : String(10001 + i * 10)}`; // never ending 98 (stays pending)
  async function payin(i: number): Promise<string> {
    const q = await as('POST', '/quotes/payin', { customer_id: customer.id, country_code: 'CM', operator_code: 'CM_MTN_MOMO', rail_type: 'mobile_money', send_amount: String(1000 + i), send_currency: 'XAF' });
    if (q.status !== 201) throw new Error(`quote ${q.status} ${q.text}`);
    const p = await as('POST', '/payins', { quote_id: q.body.id, customer_id: customer.id, source: { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: phone(i) } });
    if (p.status !== 201) throw new Error(`payin ${p.status} ${p.text}`);
    return p.body.id as string;
  }
  async function transfer(i: number): Promise<string> {
    const q = await as('POST', '/quotes/transfer', { customer_id: customer.id, payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO', payin_currency: 'XAF', payout_currency: 'XOF', payin_amount: String(5000 + i) });
    if (q.status !== 201) throw new Error(`transfer quote ${q.status} ${q.text}`);
    const tr = await as('POST', '/transfers', {
      quote_id: q.body.id, customer_id: customer.id,
      payer: { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: `+23767100${String(1000 + i).padStart(4, '0')}` },
      recipient: { country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone: `+22177100${String(1000 + i).padStart(4, '0')}`, recipient_type: 'individual', first_name: 'Moussa', last_name: 'Ndiaye' },
    });
    if (tr.status !== 201) throw new Error(`transfer ${tr.status} ${tr.text}`);
    return tr.body.id as string;
  }

  // The load: payins and transfers interleaved, CONCURRENCY at a time; worker1 dies half-way.
  const jobs: Array<() => Promise<['payin' | 'transfer', string]>> = [];
  for (let i = 0; i < PAYINS; i++) jobs.push(async () => ['payin', await payin(i)]);
  for (let i = 0; i < TRANSFERS; i++) jobs.splice(i * 5 + 2, 0, async () => ['transfer', await transfer(i)]);
  const created: Array<['payin' | 'transfer', string]> = [];
  const began = Date.now();
  let next = 0;
  let killed = false;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      created.push(await job());
      if (!killed && created.length >= jobs.length / 2) {
        killed = true;
        worker1!.child.kill('SIGKILL');
      }
    }
  }));
  await worker1!.exited;
  t.comment(`load created in ${Date.now() - began} ms`);
  t.equal(created.length, PAYINS + TRANSFERS, `${PAYINS} payins and ${TRANSFERS} transfers created through both APIs`);
  t.ok(killed, 'worker1 was killed with SIGKILL mid-run');

  // Everything settles on the surviving worker.
  const payinIds = created.filter(([k]) => k === 'payin').map(([, id]) => id);
  const transferIds = created.filter(([k]) => k === 'transfer').map(([, id]) => id);
  const final = new Map<string, any>();
  const deadline = Date.now() + 120_000;
  for (const [kind, id] of created) {
    for (;;) {
      const r = await as('GET', `/${kind}s/${id}`);
      if (r.body?.status === 'completed' || r.body?.status === 'failed') { final.set(id, r.body); break; }
      if (Date.now() > deadline) throw new Error(`${kind} ${id} never settled: ${r.text}\n${worker2!.log.join('')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  t.comment(`everything settled ${Date.now() - began} ms after the load began`);
  const payinsDone = payinIds.map((id) => final.get(id));
  const failedPayins = payinsDone.filter((p) => p.status === 'failed').length;
  t.equal(failedPayins, PAYINS / 20, 'the payins planned to fail failed, every other one completed');
  t.ok(transferIds.every((id) => final.get(id).status === 'completed'), 'every transfer completed');
  t.comment(`settled: ${PAYINS - failedPayins} payins completed, ${failedPayins} failed, ${TRANSFERS} transfers completed`);

  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  try {
    // Each collection and each disbursement reached the provider once.
    const legs = await sql.query<{ kind: string; n: string; refs: string }>(
      `SELECT kind, count(*) AS n, count(DISTINCT reference) AS refs FROM sandbox_provider_legs GROUP BY kind ORDER BY kind`);
    const byKind = Object.fromEntries(legs.rows.map((r) => [r.kind, r]));
    t.equal(Number(byKind.collection?.n), PAYINS + TRANSFERS, 'one collection per payin and per transfer');
    t.equal(Number(byKind.disbursement?.n), TRANSFERS, 'one disbursement per transfer');

    // One terminal event per payment stream, one completion per transfer.
    const terminal = await sql.query<{ stream_id: string; n: string }>(
      `SELECT stream_id, count(*) AS n FROM events
        WHERE type IN ('payin.completed', 'payin.failed', 'transfer.payin.completed', 'transfer.payout.completed', 'transfer.completed')
        GROUP BY stream_id, type HAVING count(*) > 1`);
    t.same(terminal.rows, [], 'no terminal event appended twice');

    // Webhook events: one per terminal change, each delivered.
    const expected = PAYINS + TRANSFERS * 3; // payin.*; transfer.payin.completed, transfer.payout.completed, transfer.completed
    // Recorded by the workers after the payments settled: waited for, not assumed.
    await waitUntil(`${expected} webhook events recorded`, async () => Number((await sql.query<{ n: string }>('SELECT count(*) AS n FROM webhook_events')).rows[0]!.n) >= expected);
    const hooks = await sql.query<{ n: string; distinct_pairs: string }>(
      `SELECT count(*) AS n, count(DISTINCT (resource_id, event)) AS distinct_pairs FROM webhook_events`);
    t.equal(Number(hooks.rows[0]!.n), expected, `${expected} webhook events recorded`);
    t.equal(Number(hooks.rows[0]!.distinct_pairs), expected, 'none recorded twice for one resource');
    await waitUntil('the receiver to get every event', () => new Set(received.map((r) => r.id)).size >= expected);
    t.equal(new Set(received.map((r) => r.id)).size, expected, 'the receiver got every event (deduplicated by id)');
    t.comment(`webhooks: ${expected} events, ${received.length} deliveries received (redeliveries after the kill included)`);

    // The ledger balances: each wallet is what the settled payments say it must be.
    let xaf = 0n;
    let xof = 2_000_000n;
    for (const p of payinsDone) if (p.status === 'completed') xaf += BigInt(p.receive_amount);
    for (const id of transferIds) {
      const tr = final.get(id);
      xaf += BigInt(tr.payin_amount) - BigInt(tr.total_fee);
      xof -= BigInt(tr.payout_amount);
    }
    const wallets = Object.fromEntries((await as('GET', '/wallets')).body.data.map((w: any) => [w.currency, w]));
    t.same({ available: wallets.XAF.available, reserved: wallets.XAF.reserved }, { available: xaf.toString(), reserved: '0' }, 'XAF wallet = payin credits + transfer collections');
    t.same({ available: wallets.XOF.available, reserved: wallets.XOF.reserved }, { available: xof.toString(), reserved: '0' }, 'XOF wallet = top-up − transfer disbursements');
  } finally {
    await sql.end();
  }
  }
}
