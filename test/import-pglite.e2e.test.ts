// Issue 30: a DATA_DIR written by the earlier embedded mode (PGlite, in $DATA_DIR/pglite) is never
// silently ignored: the service refuses to start on it with a message that says how to keep its
// events, nothing in it changes, and `npm run import-pglite` carries every table into the embedded
// PostgreSQL, after which the service starts where the old one stopped and the audit passes.
// The earlier directory is made here with PGlite itself, holding the tables and rows of a service
// that moved money (the same schema: both are PostgreSQL with the same migrations).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { PGlite } from '@electric-sql/pglite';
import { loadConfig } from '../infra/config.ts';
import { startApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { stopEmbeddedPostgres } from '../infra/embedded-postgres.ts';
import { ADMIN_TOKEN, request, startTestApp } from './helpers/app.ts';
import { cli } from './helpers/finance.ts';
import { leg, newCustomer, party, quote, settled, topUp } from './helpers/money.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const m = await h.newMerchant('Before the upgrade');
await topUp(h, m, 'XAF', '10000');
const customer = await newCustomer(h, m);
const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
const payin = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', '+237670000001') }, { idem: true });
await settled(h, m, 'payins', payin.body.id);
const knex = h.app.services.knex;
const count = async (table: string) => Number((await knex.raw(`SELECT count(*) AS n FROM "${table}"`)).rows[0].n);
const eventsBefore = await count('events');

/** The test app's tables and rows, written into a PGlite directory as the earlier version kept them. */
async function earlierDataDir(): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-pglite-import-'));
  fs.chmodSync(dataDir, 0o755);
  fs.copyFileSync(path.join(h.dataDir, 'server-key'), path.join(dataDir, 'server-key')); // its sealed secrets' key
  const lite = new PGlite(path.join(dataDir, 'pglite'));
  const tables = (await knex.raw(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)).rows as Array<{ table_name: string }>;
  for (const { table_name: table } of tables) {
    const cols = (await knex.raw(`SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type FROM pg_attribute a
      WHERE a.attrelid = ?::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, [table])).rows as Array<{ name: string; type: string }>;
    await lite.exec(`CREATE TABLE "${table}" (${cols.map((c) => `"${c.name}" ${c.type}`).join(', ')})`);
    const rows = (await knex.raw(`SELECT coalesce(json_agg(x), '[]')::text AS j FROM "${table}" x`)).rows[0].j as string;
    await lite.query(`INSERT INTO "${table}" SELECT * FROM json_populate_recordset(NULL::"${table}", $1::json)`, [rows]);
  }
  await lite.close();
  return dataDir;
}

t.test('the service refuses an earlier PGlite DATA_DIR and changes nothing; the import carries it over', { timeout: 180_000 }, async (t) => {
  const dataDir = await earlierDataDir();
  t.teardown(async () => {
    await stopEmbeddedPostgres(dataDir);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const config = { ...loadConfig({ ADMIN_TOKEN, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ALLOW_PRIVATE_URLS: 'true', SANDBOX_SETTLE_MS: '50' }, []), databaseUrl: undefined };
  const listing = () => fs.readdirSync(dataDir).sort();
  const before = listing();
  await t.rejects(startApp({ config, log: createLogger('silent'), port: 0 }), { message: /earlier version's embedded mode \(PGlite\).*npm run import-pglite/ }, 'refused with the way to keep its events');
  t.same(listing(), before, 'nothing written beside it');

  const imported = await cli('import-pglite', [], { DATABASE_URL: '', DATA_DIR: dataDir });
  t.equal(imported.code, 0, imported.stderr);
  t.match(imported.stdout, /^imported \d+ rows in \d+ tables/);
  t.ok(fs.existsSync(path.join(dataDir, 'pglite', 'PG_VERSION')), 'the earlier directory is still there');
  const again = await cli('import-pglite', [], { DATABASE_URL: '', DATA_DIR: dataDir });
  t.equal(again.code, 1, 'a second import is refused');
  t.match(again.stderr, /already holds \d+ events/);

  const app = await startApp({ config, log: createLogger('silent'), port: 0 });
  t.teardown(() => app.stop());
  const as = (p: string) => request(app.url!, 'GET', p, { headers: { 'x-api-key': m.apiKey, 'x-api-secret': m.apiSecret } });
  const read = await as(`/payins/${payin.body.id}`);
  t.equal(read.status, 200, 'the merchant\'s key works (its hash came along), and its payin is there');
  t.equal(read.body.status, 'completed');
  t.match((await as('/wallets')).body.data, [{ currency: 'XAF', available: '14925' }], 'the wallet as it was');
  const events = Number((await app.services.knex.raw('SELECT count(*) AS n FROM events')).rows[0].n);
  t.ok(events >= eventsBefore, `every event (${eventsBefore} before the upgrade, ${events} now)`);
  const audit = await request(app.url!, 'POST', '/admin/audit', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.equal(audit.body.discrepancies, 0, 'the audit passes on the imported history');
});
