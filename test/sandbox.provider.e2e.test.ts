// The sandbox operator's books (infra/providers/sandbox.ts) on the service's own database: a leg
// is initiated once per reference, settles to its planned outcome once its settle time has passed
// (at once with no settle time), and a stuck leg stays pending. Runs on PGlite, or on PostgreSQL
// when DATABASE_URL is set.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp } from './helpers/app.ts';
import { ManualClock } from '../infra/clock.ts';
import { SandboxProvider } from '../infra/providers/sandbox.ts';
import type { InitiateLeg } from '../infra/providers/types.ts';

const h = await startTestApp();
t.teardown(() => h.stop());

const leg = (phone: string): InitiateLeg => ({
  reference: randomUUID(), kind: 'disbursement', operatorCode: 'CM_MTN_MOMO', phone, amount: 5000n, currency: 'XAF',
});

t.test('no settle time: the leg is settled when initiated, and a second initiate changes nothing', async (t) => {
  const clock = new ManualClock();
  const sandbox = new SandboxProvider(h.app.services.knex, clock, h.app.services.secrets, 0);
  const ok = leg('+237670000001');
  const first = await sandbox.initiate(ok);
  t.equal(first.state, 'completed');
  t.match(first.providerReference, /^SBX-/);
  t.same(await sandbox.initiate({ ...ok, phone: '+237670000099' }), first, 'same reference: the first leg, unchanged');
  t.same(await sandbox.status(ok), first);
  const failed = await sandbox.initiate(leg('+237670000099'));
  t.same({ state: failed.state, reason: (failed as { reason?: string }).reason }, { state: 'failed', reason: 'RECIPIENT_NOT_FOUND' });
  const stuck = leg('+237670000098');
  t.equal((await sandbox.initiate(stuck)).state, 'pending', 'a stuck leg is pending even with no settle time');
  clock.advance(3_600_000);
  t.equal((await sandbox.status(stuck))!.state, 'pending', 'and stays pending');
  const row = await h.app.services.knex('sandbox_provider_legs').where({ reference: ok.reference }).first();
  t.equal(row.state, 'completed');
  t.ok(row.settled_at, 'settled_at recorded');
});

t.test('with a settle time: pending until it has passed, then settled once to the planned outcome', async (t) => {
  const clock = new ManualClock();
  const sandbox = new SandboxProvider(h.app.services.knex, clock, h.app.services.secrets, 1_000);
  const ok = leg('+237670000002');
  const started = await sandbox.initiate(ok);
  t.equal(started.state, 'pending');
  clock.advance(999);
  t.same(await sandbox.status(ok), started, 'not yet due');
  clock.advance(1);
  const done = await sandbox.status(ok);
  t.same(done, { state: 'completed', providerReference: started.providerReference }, 'due: completed, same provider reference');
  const settledAt = (await h.app.services.knex('sandbox_provider_legs').where({ reference: ok.reference }).first()).settled_at;
  clock.advance(5_000);
  t.same(await sandbox.status(ok), done, 'asked again: the same outcome');
  const again = (await h.app.services.knex('sandbox_provider_legs').where({ reference: ok.reference }).first()).settled_at;
  t.same(new Date(again), new Date(settledAt), 'settled once (settled_at unchanged)');
  t.equal(await sandbox.status({ reference: randomUUID(), kind: 'collection' }), undefined, 'an unknown reference');
});

t.test('legs initiated and statuses asked together: one statement each, every call answered as alone', async (t) => {
  const clock = new ManualClock();
  const knex = h.app.services.knex;
  const sandbox = new SandboxProvider(knex, clock, h.app.services.secrets, 1000);
  const legs = [leg('+237670000001'), leg('+237670000099'), leg('+237670000098'), leg('+237670000002')];
  const queries: string[] = [];
  const onQuery = (q: { sql: string }) => { if (q.sql.includes('sandbox_provider_legs')) queries.push(q.sql); };
  knex.on('query', onQuery);
  t.teardown(() => { knex.off('query', onQuery); });
  // The first leg twice in one turn, with a phone that would fail: its first initiate stands.
  const started = await Promise.all([...legs.map((l) => sandbox.initiate(l)), sandbox.initiate({ ...legs[0]!, phone: '+237670000099' })]);
  t.same(started.map((s) => s.state), ['pending', 'pending', 'pending', 'pending', 'pending']);
  t.equal(started[4]!.providerReference, started[0]!.providerReference, 'the repeated reference answers with the first leg');
  t.equal(new Set(started.slice(0, 4).map((s) => s.providerReference)).size, 4, 'one provider reference per leg');
  t.equal(queries.filter((q) => q.startsWith('INSERT')).length, 1, 'one INSERT for the five calls');
  queries.length = 0;
  clock.advance(1000);
  const statuses = await Promise.all([...legs.map((l) => sandbox.status(l)), sandbox.status(legs[0]!), sandbox.status({ reference: 'no-such-leg', kind: 'collection' })]);
  t.same(statuses.map((s) => s && s.state), ['completed', 'failed', 'pending', 'completed', 'completed', undefined]);
  t.equal((statuses[1] as { reason?: string }).reason, 'RECIPIENT_NOT_FOUND');
  t.equal(queries.length, 1, 'one statement for the six status calls');
  const rows = await knex('sandbox_provider_legs').whereIn('reference', legs.map((l) => l.reference)).select('reference', 'state');
  t.same(Object.fromEntries(rows.map((r: { reference: string; state: string }) => [r.reference, r.state])),
    Object.fromEntries(legs.map((l, i) => [l.reference, ['completed', 'failed', 'pending', 'completed'][i]])), 'the books agree');
});
