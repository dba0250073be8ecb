// Rebuilding read models from the event store (projections/rebuild.ts) and the
// `npm run projections` CLI (cli/projections.ts).
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { Knex } from 'knex';
import { leg, newCustomer, party, quote, settled, settledPayins, topUp, until } from './helpers/money.ts';
import { startTestApp } from './helpers/app.ts';
import { projections } from '../app/registry.ts';
import { countEvents, projectionStatus, rebuildProjection } from '../projections/rebuild.ts';
import { ShadowTakenOver, createShadow } from '../projections/shadow.ts';
import { readCheckpoint, writeCheckpoint } from '../infra/checkpoints.ts';
import { openConfiguredDatabase, migrate } from '../infra/db.ts';
import { stopEmbeddedPostgres } from '../infra/embedded-postgres.ts';
import type { EventStore } from '../infra/eventstore/types.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

/** Every row of every read-model table, serialised and sorted, hashed per table. */
async function checksums(knex: Knex): Promise<Record<string, { rows: number; sha256: string }>> {
  const out: Record<string, { rows: number; sha256: string }> = {};
  for (const table of projections.flatMap((p) => p.tables)) {
    const rows = (await knex(table).select('*')) as Array<Record<string, unknown>>;
    const lines = rows.map((r) => JSON.stringify(Object.keys(r).sort().map((k) => [k, r[k]]))).sort();
    out[table] = { rows: rows.length, sha256: createHash('sha256').update(lines.join('\n')).digest('hex') };
  }
  return out;
}

// Data through the public interfaces: merchants with keys, rotations, revocations, status changes,
// routing, pricing, webhooks, and customers of every type.
const merchants = [];
for (let i = 0; i < 3; i++) merchants.push(await h.newMerchant(`Rebuild ${i}`));
const [m0, m1, m2] = merchants as [typeof merchants[0], typeof merchants[0], typeof merchants[0]];
await h.admin('POST', `/admin/merchants/${m0.merchantId}/api-keys/${m0.keyId}/rotate`, { grace_seconds: 60 });
await h.admin('POST', `/admin/merchants/${m0.merchantId}/api-keys`, { expires_at: '2099-01-01T00:00:00Z' });
await h.admin('PUT', `/admin/merchants/${m1.merchantId}/routing`, { payin_operators: ['CM_MTN_MOMO'], corridors: ['CM-SN-XAF-XOF'] });
await h.admin('PUT', `/admin/merchants/${m1.merchantId}/pricing`, { payin: { percent: '2.5', fixed: '25' } });
await h.admin('PUT', `/admin/merchants/${m1.merchantId}/webhook`, { url: 'http://127.0.0.1:9/hooks' });
for (let i = 0; i < 12; i++) {
  const m = i % 2 === 0 ? m1 : m2;
  const body = i % 3 === 0
    ? { customer_type: 'business', business_name: `Biz ${i}`, metadata: { n: String(i) } }
    : i % 3 === 1
      ? { customer_type: 'retail', first_name: `F${i}`, last_name: 'L', id_number: `ID-${i}`, phone: '+237677123456' }
      : { first_name: `F${i}`, last_name: 'L', phone: '97123456', country_code: 'BJ', date_of_birth: '1990-01-01', external_ref: `r${i}` };
  const r = await h.as(m, 'POST', '/customers', body, { idem: true });
  if (r.status !== 201) throw new Error(`customer create failed: ${r.status} ${r.text}`);
}
// Money, settled: a top-up, a payin that completes and one that fails, a payout, and a transfer,
// so the wallets, ledger entries, quotes, payments and transfers tables are compared too.
await topUp(h, m1, 'XOF', '100000');
const payer = await newCustomer(h, m1);
await settledPayins(h, m1, payer);
{
  const q = await quote(h, m1, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '2000'));
  const p = await h.as(m1, 'POST', '/payouts', {
    quote_id: q.id, customer_id: payer, payment_reason_text: 'refund',
    recipient: { ...party('SN', 'SN_WAVE_MOMO', '+221770000001'), recipient_type: 'individual', first_name: 'Awa', last_name: 'Diop' },
  }, { idem: true });
  if (p.status !== 201) throw new Error(`payout failed: ${p.status} ${p.text}`);
  await settled(h, m1, 'payouts', p.body.id);
}
{
  const q = await h.as(m1, 'POST', '/quotes/transfer', {
    payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO', payin_currency: 'XAF', payout_currency: 'XOF', payin_amount: '10000',
  }, { idem: true });
  const tr = await h.as(m1, 'POST', '/transfers', {
    quote_id: q.body.id, customer_id: payer, payer: party('CM', 'CM_MTN_MOMO', '+237670000002'),
    recipient: { ...party('SN', 'SN_WAVE_MOMO', '+221770000002'), recipient_type: 'individual', first_name: 'Moussa', last_name: 'Ndiaye' },
  }, { idem: true });
  if (tr.status !== 201) throw new Error(`transfer failed: ${tr.status} ${tr.text}`);
  await until('transfer completed', async () => (await h.as(m1, 'GET', `/transfers/${tr.body.id}`)).body.status === 'completed');
}
await h.admin('POST', `/admin/merchants/${m2.merchantId}/api-keys/${m2.keyId}/revoke`);
await h.admin('POST', `/admin/merchants/${m2.merchantId}/status`, { status: 'inactive' });
await s.awaitReadModels(await s.store.head());
// From here on, only the rebuilds write the read models.
await s.projector.stop();

const head = await s.store.head();
const before = await checksums(s.knex);

t.test('the fixture fills the merchant, customer and money read models', async (t) => {
  for (const table of ['merchants', 'api_keys', 'customers', 'quotes', 'payins', 'payouts', 'wallets', 'ledger_entries', 'transfers']) t.ok(before[table]!.rows > 0, `${table} has ${before[table]!.rows} rows`);
  t.same(Object.keys(before).sort(), projections.flatMap((p) => p.tables).sort(), 'every table of every registered projection is compared');
  t.ok(head > 0n);
});

t.test('rebuilding each projection gives identical tables, checkpoint at the head, progress to the end', async (t) => {
  for (const p of projections) {
    const progress: Array<[number, number]> = [];
    const r = await rebuildProjection(s.knex, s.store, p, (done, total) => progress.push([done, total]), 7);
    t.equal(r.position, head, `${p.name}: at the head`);
    t.equal(await readCheckpoint(s.knex, p.name), head, `${p.name}: checkpoint written`);
    t.ok(r.events > 7, `${p.name}: ${r.events} events in several batches`);
    t.same(progress[0], [0, r.events], 'starts at 0 of every event');
    t.same(progress[progress.length - 1], [r.events, r.events], 'ends at every event');
    t.ok(progress.every(([d], i) => i === 0 || d >= progress[i - 1]![0]), 'never goes back');
    t.ok(progress.length >= Math.ceil(r.events / 7), 'reported after each batch');
  }
  t.same(await checksums(s.knex), before, 'every table identical after the rebuilds');
});

t.test('a rebuild repairs a damaged read model', async (t) => {
  const customers = projections.find((p) => p.name === 'customers')!;
  const merchantsProjection = projections.find((p) => p.name === 'merchants')!;
  await s.knex('customers').update({ first_name: 'tampered', kyc_status: 'verified' });
  await s.knex('customers').where('customer_type', 'business').delete();
  await s.knex('api_keys').delete();
  await s.knex('merchants').update({ status: 'inactive' });
  t.not((await checksums(s.knex)).customers!.sha256, before.customers!.sha256, 'damaged');
  await rebuildProjection(s.knex, s.store, customers);
  await rebuildProjection(s.knex, s.store, merchantsProjection);
  t.same(await checksums(s.knex), before, 'repaired');
});

t.test('a rebuild whose shadow tables are taken over by another run stops and leaves the live tables alone', async (t) => {
  const customers = projections.find((p) => p.name === 'customers')!;
  let reads = 0;
  let meddled: Promise<unknown> | undefined;
  const meddling = Object.create(s.store) as EventStore;
  meddling.readAll = async (after, limit) => {
    // A second rebuild of the same projection starts meanwhile (it recreates the shadow schema).
    if (reads++ === 1) await (meddled = createShadow(s.knex, customers, 'rebuild'));
    return s.store.readAll(after, limit);
  };
  await t.rejects(rebuildProjection(s.knex, meddling, customers, undefined, 5), ShadowTakenOver);
  // The first run can stop (its batch written ahead finds its tables gone, and it drops its shadow)
  // while the other run is still creating the shadow, which may then fail: let that attempt end,
  // either way, before the next rebuild drops and recreates the schema.
  await meddled?.catch(() => undefined);
  t.same(await checksums(s.knex), before, 'the live tables are untouched');
  await rebuildProjection(s.knex, s.store, customers);
  t.same(await checksums(s.knex), before, 'a rebuild without interference gives the same tables');
  const schemas = await s.knex.raw<{ rows: unknown[] }>(`SELECT 1 FROM information_schema.schemata WHERE schema_name LIKE 'rebuild\\_%'`);
  t.equal(schemas.rows.length, 0, 'no shadow schema left behind');
});

t.test('status: each projection\'s checkpoint against the head, lag in events', async (t) => {
  const merchantsProjection = projections.find((p) => p.name === 'merchants')!;
  await writeCheckpoint(s.knex, merchantsProjection.name, 0n);
  const rows = await projectionStatus(s.knex, s.store, projections);
  const total = Number((await s.knex.raw<{ rows: Array<{ n: string | number }> }>('SELECT count(*) AS n FROM events')).rows[0]!.n);
  for (const r of rows) {
    t.equal(r.head, head);
    if (r.projection === 'merchants') t.same([r.checkpoint, r.lag], [0n, total], 'merchants: every event behind');
    else t.same([r.checkpoint, r.lag], [head, 0], `${r.projection}: up to date`);
  }
  await writeCheckpoint(s.knex, merchantsProjection.name, head);
});

t.test('lag counts events: in SQL for the PostgreSQL store, by reading through for another store', async (t) => {
  const total = Number((await s.knex.raw<{ rows: Array<{ n: string | number }> }>('SELECT count(*) AS n FROM events')).rows[0]!.n);
  const all = await s.store.readAll(0n, 10_000);
  const middle = all[Math.floor(all.length / 2)]!.position;
  const expectedAfterMiddle = all.filter((e) => e.position > middle).length;
  t.equal(await countEvents(s.knex, s.store, 0n, head), total);
  t.equal(await countEvents(s.knex, s.store, middle, head), expectedAfterMiddle);
  t.equal(await countEvents(s.knex, s.store, head, head), 0);
  const elsewhere = Object.create(s.store) as EventStore;
  Object.defineProperty(elsewhere, 'name', { value: 'kurrentdb' });
  t.equal(await countEvents(s.knex, elsewhere, 0n, head, 4), total, 'read through in pages of 4');
  t.equal(await countEvents(s.knex, elsewhere, middle, head, 4), expectedAfterMiddle);
  t.equal(await countEvents(s.knex, elsewhere, 0n, middle, 4), total - expectedAfterMiddle, 'stops at upTo');
});

interface Run { code: number | null; stdout: string; stderr: string }
function cli(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'cli/projections.ts'), ...args], {
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

const statusLines = (stdout: string) => Object.fromEntries(stdout.trim().split('\n').slice(1).map((l) => {
  const [name, checkpoint, headCol, lag] = l.split(/\s+/);
  return [name!, { checkpoint: checkpoint!, head: headCol!, lag: Number(lag) }];
}));

t.test('CLI against PostgreSQL: status, then rebuild one projection, then status', { timeout: 120_000 }, async (t) => {
  const env = { DATABASE_URL: s.config.databaseUrl!, DATA_DIR: h.config.dataDir };
  const customers = projections.find((p) => p.name === 'customers')!;
  await writeCheckpoint(s.knex, customers.name, 0n);
  const first = await cli(['status'], env);
  t.equal(first.code, 0, first.stderr);
  t.match(first.stdout.split('\n')[0], /^projection\s+checkpoint\s+head\s+lag_events\s+state$/);
  const st = statusLines(first.stdout);
  t.same(Object.keys(st).sort(), projections.map((p) => p.name).sort(), 'one line per projection');
  t.same(st.merchants, { checkpoint: head.toString(), head: head.toString(), lag: 0 });
  const total = Number((await s.knex.raw<{ rows: Array<{ n: string | number }> }>('SELECT count(*) AS n FROM events')).rows[0]!.n);
  t.same(st.customers, { checkpoint: '0', head: head.toString(), lag: total }, 'customers: every event behind');

  const rebuilt = await cli(['rebuild', 'customers'], env);
  t.equal(rebuilt.code, 0, rebuilt.stderr);
  t.match(rebuilt.stdout, new RegExp(`^rebuilt customers: \\d+ events in [0-9.]+s, checkpoint ${head}\\n$`));
  t.match(rebuilt.stderr, /customers \[#+\] 100% \d+\/\d+ events/, 'a progress bar on stderr');
  t.same(await checksums(s.knex), before, 'the CLI rebuild gives the same tables');
  const after = statusLines((await cli(['status'], env)).stdout);
  t.same(after.customers, { checkpoint: head.toString(), head: head.toString(), lag: 0 });
});

t.test('CLI: usage errors exit 2', { timeout: 120_000 }, async (t) => {
  const unknown = await cli(['rebuild', 'nope'], { DATABASE_URL: '', DATA_DIR: path.join(os.tmpdir(), 'mpa-none') });
  t.equal(unknown.code, 2);
  t.ok(unknown.stderr.includes(`unknown projection "nope"; known projections: ${projections.map((p) => p.name).join(', ')}`), unknown.stderr);
  t.equal(unknown.stdout, '');
  const none = await cli([], { DATABASE_URL: '' });
  t.equal(none.code, 2);
  t.match(none.stderr, /usage: npm run projections/);
});

t.test('CLI on the embedded database: a missing data directory, then status and a rebuild beside the running server', { timeout: 120_000 }, async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-cli-'));
  t.teardown(async () => {
    await stopEmbeddedPostgres(dataDir);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const env = { DATABASE_URL: '', DATA_DIR: dataDir };

  const missing = await cli(['status'], { ...env, DATA_DIR: path.join(dataDir, 'none') });
  t.equal(missing.code, 1);
  t.match(missing.stderr, /no data directory at .*none/);

  // The service's database, left open as a running service holds it.
  const db = await openConfiguredDatabase({ databaseUrl: undefined, dataDir }, { log: () => undefined, stopServer: 'always' });
  await migrate(db);
  const rebuilt = await cli(['rebuild'], env);
  t.equal(rebuilt.code, 0, `a rebuild beside the running server: ${rebuilt.stderr}`);
  const ok = await cli(['status'], env);
  t.equal(ok.code, 0, ok.stderr);
  const st = statusLines(ok.stdout);
  for (const p of projections) t.same(st[p.name], { checkpoint: '0', head: '0', lag: 0 }, p.name);
  t.equal((await db.knex.raw('SELECT 1 AS one')).rows[0].one, 1, 'the server the CLI used is still the service\'s, still running');
  await db.close();
  t.notOk(fs.existsSync(path.join(dataDir, 'postgres', 'data', 'postmaster.pid')), 'stopped with the service');
});

t.test('online: while a rebuild runs, the API answers from the current tables, writes go on, and the rebuilt tables have them all', { timeout: 120_000 }, async (t) => {
  // The service runs again: the projector applies new events to the live tables during the rebuild.
  await s.projector.start();
  const customers = projections.find((p) => p.name === 'customers')!;
  const listAll = async () => {
    const r = await h.as(m1, 'GET', '/customers?limit=100');
    return { status: r.status, ids: (r.body?.data ?? []).map((c: { id: string }) => c.id) as string[] };
  };
  const initial = await listAll();
  t.equal(initial.status, 200);
  t.ok(initial.ids.length > 0);

  // A slow store: the rebuild replays in batches of 3 with a pause before each read.
  const slow = Object.create(s.store) as EventStore;
  let reads = 0;
  slow.readAll = async (after, limit) => {
    reads++;
    await new Promise((r) => setTimeout(r, 15));
    return s.store.readAll(after, limit);
  };
  const progress: Array<[number, number]> = [];
  let finished = false;
  const rebuilding = rebuildProjection(s.knex, slow, customers, (d, total) => progress.push([d, total]), 3)
    .finally(() => { finished = true; });

  const created: string[] = [];
  let readsDuringRebuild = 0;
  while (!finished) {
    // Reads: never an empty or partial list; a customer created a moment ago is there at once.
    const list = await listAll();
    t.equal(list.status, 200);
    for (const id of [...initial.ids, ...created]) if (!list.ids.includes(id)) t.fail(`customer ${id} missing during the rebuild`);
    readsDuringRebuild++;
    if (created.length < 5 && !finished) {
      const c = await h.as(m1, 'POST', '/customers', { first_name: `Online ${created.length}`, last_name: 'L' }, { idem: true });
      t.equal(c.status, 201);
      created.push(c.body.id);
      const got = await h.as(m1, 'GET', `/customers/${c.body.id}`);
      t.equal(got.status, 200, 'read-your-writes during the rebuild');
    }
  }
  const r = await rebuilding;
  t.ok(reads > 3, `the rebuild read the store in ${reads} batches`);
  t.ok(readsDuringRebuild >= 2, `${readsDuringRebuild} list reads while it ran`);
  t.ok(created.length > 0, `${created.length} customers created while it ran`);
  t.same(progress[progress.length - 1], [r.events, r.events], 'progress ends at every event');

  await s.awaitReadModels(await s.store.head());
  const after = await listAll();
  t.same(after.ids.sort(), [...initial.ids, ...created].sort(), 'every customer, old and new, after the swap');
  t.equal(await readCheckpoint(s.knex, customers.name) >= r.position, true, 'the checkpoint at or past the rebuilt position');
  // The swapped-in tables are exactly a fresh fold: rebuilding again (projector stopped) changes nothing.
  await s.projector.stop();
  const swapped = await checksums(s.knex);
  await rebuildProjection(s.knex, s.store, customers);
  t.same(await checksums(s.knex), swapped, 'identical to a fresh rebuild');
  const schemas = await s.knex.raw<{ rows: unknown[] }>(`SELECT 1 FROM information_schema.schemata WHERE schema_name LIKE 'rebuild\\_%'`);
  t.equal(schemas.rows.length, 0, 'the shadow schema is dropped');
});
