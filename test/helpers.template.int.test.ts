// The test databases' migrated template (test/helpers/db.ts): the run's files build it at once, and
// every one of them must get it. A CI run failed with 23505 on pg_database's unique index: a rename
// of a finished build to the template's name that ran while another file's rename was committing
// (the name was free when checked) fails on the index, not with 42P04.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { buildTemplate, testServerUrl, dbLabel } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

t.comment(`on ${dbLabel}`);

async function client(t: { teardown(fn: () => unknown): void }) {
  const c = new pg.Client({ connectionString: await testServerUrl() });
  await c.connect();
  t.teardown(() => c.end());
  return c;
}

const databases = async (c: pg.Client, prefix: string) =>
  (await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY 1', [`${prefix}%`])).rows.map((r) => r.datname);

t.test('a build whose rename meets another file\'s rename committing gets the other\'s template', async (t) => {
  const admin = await client(t);
  const other = await client(t);
  const name = `mpa_template_race_${randomBytes(3).toString('hex')}`;
  t.teardown(async () => {
    for (const d of await databases(admin, name)) await admin.query(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`);
  });
  // The other file's build, done and renamed in a transaction not yet committed.
  await admin.query(`CREATE DATABASE ${name}_other`);
  await other.query('BEGIN');
  await other.query(`ALTER DATABASE ${name}_other RENAME TO ${name}`);
  const built = buildTemplate(name).then((v) => v, (err: Error) => err);
  await waitUntil('this build\'s rename waiting on the other\'s', async () =>
    (await admin.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'ALTER DATABASE ${name}_% RENAME TO ${name}'`)).rowCount === 1);
  await other.query('COMMIT');
  t.equal(await built, name, 'resolves to the template the other made');
  t.same(await databases(admin, name), [name], 'the template alone: this build\'s copy dropped');
});

t.test('builds started at once all end with the one template', async (t) => {
  const admin = await client(t);
  const name = `mpa_template_race_${randomBytes(3).toString('hex')}`;
  t.teardown(async () => {
    for (const d of await databases(admin, name)) await admin.query(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`);
  });
  const results = await Promise.allSettled(Array.from({ length: 4 }, () => buildTemplate(name)));
  t.same(results.map((r) => r.status === 'fulfilled' ? r.value : String(r.reason)), Array(4).fill(name), 'four builds, one name');
  t.same(await databases(admin, name), [name], 'the template alone, no building copy left');
});
