// The finance audit end to end (issue 10, point 2): `POST /admin/audit` and `npm run audit` replay
// every event, verify the ledger and compare every read model with a fresh fold. A clean run passes;
// a corrupted read-model row is caught and named, and an online rebuild repairs it; a forged event in
// the store is caught by the ledger checks; the CLI exits non-zero on any discrepancy.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { businessDay, cli } from './helpers/finance.ts';
import { leg, newCustomer, party, quote, settled, topUp, until } from './helpers/money.ts';
import { projections } from '../app/registry.ts';
import { rebuildProjection } from '../projections/rebuild.ts';
import { openConfiguredDatabase, migrate } from '../infra/db.ts';
import { stopEmbeddedPostgres } from '../infra/embedded-postgres.ts';
import type { AuditReport } from '../projections/finance-audit.ts';

const h = await startTestApp({ env: { SANDBOX_SETTLE_MS: '30' } });
t.teardown(() => h.stop());
const s = h.app.services;
const biz = await businessDay(h, 'Audited');
const { m } = biz;

const audit = async (): Promise<AuditReport> => {
  const r = await h.admin('POST', '/admin/audit');
  if (r.status !== 200) throw new Error(`audit: ${r.status} ${r.text}`);
  return r.body as AuditReport;
};
const tableOf = (r: AuditReport, projection: string, table: string) => r.read_models.find((p) => p.projection === projection)!.tables.find((x) => x.table === table)!;
const scratchSchemas = async () =>
  (await s.knex.raw<{ rows: unknown[] }>(`SELECT 1 FROM information_schema.schemata WHERE schema_name LIKE 'audit\\_%' OR schema_name LIKE 'rebuild\\_%'`)).rows.length;

t.test('a clean run passes: every ledger check, every read model, totals that add up', async (t) => {
  const r = await audit();
  t.equal(r.ok, true);
  t.equal(r.discrepancies, 0);
  t.same(Object.values(r.ledger.counts).filter((n) => n > 0), [], 'no ledger finding');
  t.same(r.ledger.findings, []);
  t.same(r.read_models.map((p) => p.projection), projections.map((p) => p.name), 'every registered projection is compared');
  for (const p of r.read_models) t.equal(p.ok, true, `${p.projection} matches a fresh fold`);
  for (const table of ['wallets', 'ledger_entries', 'payins', 'payouts', 'quotes']) t.ok(tableOf(r, 'money', table).live_rows > 0, `${table} compared with rows`);
  t.ok(tableOf(r, 'transfers', 'transfers').live_rows >= 3);
  t.match(r.ledger.summary, { payins: 3, payouts: 2, transfers: 3 });
  // Conservation, cross-checked against the wallets read model: merchants' money = top-ups + credits − payouts.
  for (const c of r.ledger.summary.currencies) {
    const w = await s.knex.raw<{ rows: Array<{ total: string | null }> }>(
      'SELECT (sum(available) + sum(reserved))::text AS total FROM wallets WHERE currency = ?', [c.currency],
    );
    t.equal(c.merchant_balances, w.rows[0]!.total ?? '0', `${c.currency}: the ledger's total is the wallets'`);
    t.equal(BigInt(c.merchant_balances), BigInt(c.top_ups) + BigInt(c.credited_net) - BigInt(c.posted_holds));
    t.equal(c.all_accounts, '0');
  }
  t.equal(await scratchSchemas(), 0, 'the scratch schemas are dropped');
});

t.test('a corrupted wallet balance is caught and named; an online rebuild repairs it', async (t) => {
  const before = (await s.knex('wallets').where({ merchant_id: m.merchantId, currency: 'XOF' }).first(s.knex.raw('available::text AS available'))) as { available: string };
  await s.knex.raw(`UPDATE wallets SET available = available + 1 WHERE merchant_id = ? AND currency = 'XOF'`, [m.merchantId]);
  const r = await audit();
  t.equal(r.ok, false);
  t.equal(r.discrepancies, 1);
  t.equal(r.ledger.ok, true, 'the ledger itself (the events) is sound');
  const w = tableOf(r, 'money', 'wallets');
  t.match(w, { changed: 1, missing: 0, unexpected: 0 });
  t.same(w.samples, [{
    key: { merchant_id: m.merchantId, currency: 'XOF' }, kind: 'changed',
    columns: [{ column: 'available', live: String(BigInt(before.available) + 1n), fresh: before.available }],
  }]);
  t.ok(r.read_models.filter((p) => p.projection !== 'money').every((p) => p.ok), 'only the money read model differs');

  const started = await h.admin('POST', '/admin/projections/money/rebuild');
  t.equal(started.status, 202);
  t.match(started.body, { projection: 'money', state: 'running' });
  const done = await until('rebuild done', async () => {
    const st = await h.admin('GET', '/admin/projections');
    const row = st.body.data.find((x: { projection: string }) => x.projection === 'money');
    return row?.rebuild?.state !== 'running' ? row : undefined;
  });
  t.match(done.rebuild, { state: 'done', eta_seconds: 0, error: null });
  t.ok(done.rebuild.done > 0 && done.rebuild.done === done.rebuild.total, 'progress to the end');
  t.equal((await audit()).ok, true, 'repaired');
  t.equal((await h.admin('POST', '/admin/projections/nope/rebuild')).status, 404);
});

t.test('more corruption: a missing ledger entry, a changed payin, an unexpected customer', async (t) => {
  const entry = (await s.knex('ledger_entries').where({ merchant_id: m.merchantId }).first('event_id', 'posting_index')) as { event_id: string; posting_index: number };
  await s.knex('ledger_entries').where(entry).delete();
  await s.knex.raw(`UPDATE payins SET body = jsonb_set(body, '{receive_amount}', '"1"') WHERE id = ?`, [biz.payins.completed]);
  const row = (await s.knex('customers').where({ id: biz.customer }).first()) as Record<string, unknown>;
  await s.knex('customers').insert({ ...row, id: '99999999-9999-4999-8999-999999999999' });
  const r = await audit();
  t.equal(r.ok, false);
  t.equal(r.discrepancies, 3);
  t.match(tableOf(r, 'money', 'ledger_entries'), { missing: 1, changed: 0, unexpected: 0, samples: [{ kind: 'missing', key: entry }] });
  const payins = tableOf(r, 'money', 'payins');
  t.match(payins, { changed: 1, samples: [{ kind: 'changed', key: { id: biz.payins.completed } }] });
  t.same(payins.samples[0]!.columns!.map((c) => c.column), ['body']);
  t.match(tableOf(r, 'customers', 'customers'), { unexpected: 1, missing: 0, changed: 0 });
  for (const name of ['money', 'customers']) await rebuildProjection(s.knex, s.store, projections.find((p) => p.name === name)!);
  t.equal((await audit()).ok, true, 'repaired by rebuilds');
});

/** A small service on the embedded PostgreSQL of a data directory of its own (as `npm start` runs it). */
async function embeddedService(): Promise<{ dataDir: string; run: (fn: (h2: TestApp) => Promise<void>) => Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-audit-'));
  t.teardown(async () => {
    await stopEmbeddedPostgres(dataDir);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    dataDir,
    run: async (fn) => {
      const db = await openConfiguredDatabase({ databaseUrl: undefined, dataDir }, { log: () => undefined, stopServer: 'always' });
      await migrate(db);
      const host = { dataDir, database: { db, url: db.url, teardown: async () => undefined } } as unknown as TestApp;
      const h2 = await startTestApp({ shareWith: host, env: { SANDBOX_SETTLE_MS: '30' } });
      try {
        await fn(h2);
      } finally {
        await h2.stop();
        await db.close();
      }
    },
  };
}

t.test('CLI on the embedded database: 0 on a clean store, 1 and the report on a corrupted row, 2 on a usage error', { timeout: 180_000 }, async (t) => {
  const e = await embeddedService();
  await e.run(async (h2) => {
    const m2 = await h2.newMerchant('Embedded');
    await topUp(h2, m2, 'XAF', '10000');
    const c = await newCustomer(h2, m2);
    const q = await quote(h2, m2, 'payin', { customer_id: c, ...leg('CM_MTN_MOMO', 'CM', 'XAF', '5000') });
    const p = await h2.as(m2, 'POST', '/payins', { quote_id: q.id, customer_id: c, source: party('CM', 'CM_MTN_MOMO', '+237670000001') }, { idem: true });
    await settled(h2, m2, 'payins', p.body.id);
    const beside = await cli('audit', [], { DATABASE_URL: '', DATA_DIR: e.dataDir });
    t.equal(beside.code, 0, `beside the running service, on its PostgreSQL: ${beside.stderr}`);
    t.equal((await h2.as(m2, 'GET', '/wallets')).status, 200, 'and the service goes on');
  });
  // The service stopped its server: the CLI starts it for itself, and stops it after.
  const env = { DATABASE_URL: '', DATA_DIR: e.dataDir };
  const clean = await cli('audit', [], env);
  t.equal(clean.code, 0, clean.stderr);
  t.match(clean.stdout, /^audit PASSED: 0 discrepancies/);
  t.match(clean.stdout, /ok +entry_balanced\n/);
  t.match(clean.stdout, /XAF: merchants hold 14925 = top-ups 10000 \+ credited 4925 − paid out 0; fees 75; all accounts sum to 0/);
  t.match(clean.stdout, /ok +money +at \d+: quotes 1, payins 1, payouts 0, wallets 1, ledger_entries 5/);

  await e.run(async (h2) => {
    await h2.app.services.knex.raw(`UPDATE wallets SET reserved = reserved + 500 WHERE currency = 'XAF'`);
  });
  const broken = await cli('audit', [], env);
  t.equal(broken.code, 1, 'exit code 1 on a discrepancy');
  t.match(broken.stdout, /^audit FAILED: 1 discrepancy/);
  t.match(broken.stdout, /FAIL {2}money/);
  t.match(broken.stdout, /wallets: 1 changed, 0 missing, 0 unexpected/);
  t.match(broken.stdout, /changed \(merchant_id=[0-9a-f-]+, currency=XAF\) reserved: live 500, fresh 0/);
  const json = await cli('audit', ['--json'], env);
  t.equal(json.code, 1, json.stderr);
  t.match(JSON.parse(json.stdout), { ok: false, discrepancies: 1, ledger: { ok: true } });

  const usage = await cli('audit', ['--bogus'], env);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /usage: npm run audit/);
  t.notOk(fs.existsSync(path.join(e.dataDir, 'postgres', 'data', 'postmaster.pid')), 'no server left running by the CLI');
});

t.test('CLI against PostgreSQL, beside the running service', { timeout: 120_000 }, async (t) => {
  const env = { DATABASE_URL: s.config.databaseUrl!, DATA_DIR: h.config.dataDir };
  const clean = await cli('audit', [], env);
  t.equal(clean.code, 0, clean.stdout + clean.stderr);
  t.match(clean.stdout, /^audit PASSED/);
  await s.knex.raw(`UPDATE wallets SET available = available + 7 WHERE merchant_id = ? AND currency = 'XAF'`, [m.merchantId]);
  const broken = await cli('audit', [], env);
  t.equal(broken.code, 1);
  t.match(broken.stdout, /available: live \d+, fresh \d+/);
  await rebuildProjection(s.knex, s.store, projections.find((p) => p.name === 'money')!);
  t.equal((await cli('audit', [], env)).code, 0, 'clean again after a rebuild');
});

t.test('a forged event in the store: a payin credited twice is caught by the ledger checks', async (t) => {
  // Last: the store is append-only, this stays in it.
  const stream = `wallet-${m.merchantId}-XAF`;
  const events = await s.store.readStream(stream);
  const credit = events.find((e) => e.type === 'wallet.credited' && e.data.credit_id === biz.payins.completed)!;
  const last = events[events.length - 1]!.data as { balances: { available: string; reserved: string } };
  const data = structuredClone(credit.data) as Record<string, any>;
  data.balances = { available: String(BigInt(last.balances.available) + BigInt(data.net_amount)), reserved: last.balances.reserved };
  const appended = await s.store.append([{ streamId: stream, expectedVersion: events.length, events: [{ type: 'wallet.credited', data, metadata: { actor: 'forger' } }] }]);
  await s.awaitReadModels(appended.position);
  const r = await audit();
  t.equal(r.ok, false);
  t.equal(r.ledger.ok, false);
  t.equal(r.ledger.counts.movement_once, 1);
  t.match(r.ledger.findings, [{ check: 'movement_once', message: `credit ${biz.payins.completed} recorded 2 times`, stream, position: appended.position.toString() }]);
  t.ok(r.read_models.every((p) => p.ok), 'the read models faithfully show what the store says');
});
