// The audit never trusts a snapshot (issue 32): each snapshot of a stream it replays must equal the
// fold of that stream's events up to the snapshot's version. A tampered snapshot row is a finding;
// a snapshot of an older shape is skipped and counted.
import t from 'tap';
import { Aggregates, toNew } from '../commands/aggregates.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { systemClock } from '../infra/clock.ts';
import type { Decider, DomainEvent } from '../domain/decider.ts';
import { jsonSnapshot } from '../domain/snapshot-json.ts';
import { formatAuditReport, runAudit } from '../projections/finance-audit.ts';
import type { AnyDecider } from '../projections/snapshot-audit.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

t.comment(`on ${dbLabel}`);

type Ev = DomainEvent<'added', { n: string }>;
interface St { total: bigint; adds: number }
const counter: Decider<St, Ev> = {
  initialState: () => ({ total: 0n, adds: 0 }),
  evolve: (s, e) => ({ total: s.total + BigInt(e.data.n), adds: s.adds + 1 }),
  snapshot: jsonSnapshot<St>('counter-v1', 4),
};
const deciders = [['counted-', counter]] as Array<[string, AnyDecider]>;

t.test('a snapshot equal to the fold passes; a tampered, a too-new or an older-shape one does not pass unseen', async (t) => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  const agg = new Aggregates(store);
  const add = (id: string) => agg.transact([id], async (tx) => {
    const s = await tx.load(id, counter);
    return { appends: [{ streamId: id, expectedVersion: s.version, events: toNew([{ type: 'added', data: { n: '1000000000000000000001' } }], {}) }], result: undefined };
  });
  for (let i = 0; i < 9; i++) await add('counted-a');
  for (let i = 0; i < 5; i++) await add('counted-b');
  await waitUntil('the snapshots of counted-a at 8 and counted-b at 4', async () =>
    (await store.readSnapshot('counted-a'))?.version === 8 && (await store.readSnapshot('counted-b'))?.version === 4);
  const audit = () => runAudit(tdb.db.knex, store, [], { snapshotDeciders: deciders, batchSize: 3 });

  const clean = await audit();
  t.equal(clean.ok, true, 'correct snapshots pass');
  t.same({ checked: clean.snapshots.checked, mismatched: clean.snapshots.mismatched }, { checked: 2, mismatched: 0 });
  t.match(formatAuditReport(clean), /snapshots .*\n +ok +2 checked\n/);

  await tdb.db.knex.raw(`UPDATE snapshots SET state = jsonb_set(state, '{total,$bigint}', '"1"') WHERE stream_id = 'counted-a'`);
  const tampered = await audit();
  t.equal(tampered.ok, false, 'a tampered snapshot fails the audit');
  t.equal(tampered.discrepancies, 1);
  t.same(tampered.snapshots.findings, [{ stream: 'counted-a', version: 8, message: 'the snapshot differs from the fold of events 1..8' }]);
  t.match(formatAuditReport(tampered), /FAIL +2 checked, 1 not the fold of their stream\n.*\[counted-a @8\]/);

  await tdb.db.knex.raw(`UPDATE snapshots SET version = 50 WHERE stream_id = 'counted-a'`);
  const ahead = await audit();
  t.same(ahead.snapshots.findings.map((f) => f.message), ['the snapshot is at version 50, the stream has 9 events'], 'a version past the stream\'s end');

  await tdb.db.knex.raw(`UPDATE snapshots SET state = '{"total": 3}' WHERE stream_id = 'counted-a'`);
  await tdb.db.knex.raw(`UPDATE snapshots SET version = 8 WHERE stream_id = 'counted-a'`);
  t.equal((await audit()).snapshots.mismatched, 1, 'a snapshot that does not decode to the state');

  await tdb.db.knex.raw(`UPDATE snapshots SET shape = 'counter-v0' WHERE stream_id = 'counted-a'`);
  const older = await audit();
  t.equal(older.ok, true, 'a snapshot of another shape is never loaded: skipped');
  t.same({ checked: older.snapshots.checked, other_shape: older.snapshots.other_shape }, { checked: 1, other_shape: 1 });
});
