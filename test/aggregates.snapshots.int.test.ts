// Snapshots (issue 32): a decider that opts in is loaded from its stream's latest snapshot and the
// events after it; a snapshot of another shape is ignored; a snapshot write never fails a command.
// Two Aggregates instances on one store play two processes (the second has nothing cached).
import t from 'tap';
import { Aggregates, toNew } from '../commands/aggregates.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { systemClock } from '../infra/clock.ts';
import { fold, type Decider, type DomainEvent } from '../domain/decider.ts';
import { jsonSnapshot } from '../domain/snapshot-json.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

t.comment(`on ${dbLabel}`);

type Ev = DomainEvent<'added', { n: string }>;
/** A bigint total and plain records: what a wallet's state is made of. */
interface St { total: bigint; adds: number; last: Record<string, { n: bigint }> }
const plain: Decider<St, Ev> = {
  initialState: () => ({ total: 0n, adds: 0, last: {} }),
  evolve: (s, e) => ({ total: s.total + BigInt(e.data.n), adds: s.adds + 1, last: { ...s.last, [`n${s.adds % 3}`]: { n: BigInt(e.data.n) } } }),
};
const EVERY = 5;
const counter: Decider<St, Ev> = { ...plain, snapshot: jsonSnapshot<St>('counter-v1', EVERY) };

async function setup(t: { teardown(fn: () => unknown): void }) {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  const froms: number[] = [];
  const readStream = store.readStream.bind(store);
  store.readStream = (id, from, to) => { froms.push(from ?? 1); return readStream(id, from, to); };
  return { store, tdb, froms };
}

/** Adds n (a bigint past 2^53, so a lost bigint would show) to the stream. */
const add = (agg: Aggregates, id: string, n: bigint) => agg.transact([id], async (tx) => {
  const s = await tx.load(id, counter);
  return { appends: [{ streamId: id, expectedVersion: s.version, events: toNew([{ type: 'added', data: { n: n.toString() } }], {}) }], result: s.state };
});

/** Waits for the background write of a snapshot at `version` or newer. */
function snapshotAt(store: PostgresEventStore, id: string, version: number) {
  return waitUntil(`the snapshot of ${id} at ${version}`, async () => {
    const s = await store.readSnapshot(id);
    return s && s.version >= version ? s : undefined;
  });
}

const BIG = 9_007_199_254_740_993n; // 2^53 + 1

t.test('a load reads the latest snapshot and only the events after it; snapshot + tail = the full fold', async (t) => {
  const { store, froms } = await setup(t);
  const a = new Aggregates(store);
  for (let i = 1; i <= 12; i++) await add(a, 's-1', BIG * BigInt(i));
  const snap = await snapshotAt(store, 's-1', 10);
  t.equal(snap.version, 10, 'written once the stream was `every` events past the last one (5, then 10)');
  t.equal(snap.shape, 'counter-v1');
  t.same(snap.state, counter.snapshot!.encode(fold(plain, (await store.readStream('s-1', 1, 10)) as unknown as Ev[])), 'the fold up to its version, bigints as strings');

  froms.length = 0;
  const b = new Aggregates(store); // another process: nothing cached
  const loaded = await b.load('s-1', counter);
  t.same(froms, [11], 'read only the events after the snapshot');
  const full = fold(plain, (await store.readStream('s-1')) as unknown as Ev[]);
  t.strictSame(loaded.state, full, 'the same state as folding every event (bigints as bigints)');
  t.equal(loaded.state.total, BIG * 78n, 'a bigint round-trips exactly');
  t.equal(typeof loaded.state.last.n0!.n, 'bigint');
  t.equal(loaded.version, 12);

  froms.length = 0;
  const c = new Aggregates(store);
  await c.load('s-1', plain);
  t.same(froms, [1], 'a decider without snapshots folds from the first event');
});

t.test('a snapshot of another shape is ignored: the stream is folded from its events and snapshotted in the new shape', async (t) => {
  const { store, froms } = await setup(t);
  const a = new Aggregates(store);
  for (let i = 1; i <= 12; i++) await add(a, 's-2', BigInt(i));
  await snapshotAt(store, 's-2', 10);
  const v2: Decider<St, Ev> = { ...plain, snapshot: jsonSnapshot<St>('counter-v2', EVERY) };
  froms.length = 0;
  const b = new Aggregates(store);
  const loaded = await b.load('s-2', v2);
  t.same(froms, [1], 'folded from the first event');
  t.strictSame(loaded.state, fold(plain, (await store.readStream('s-2')) as unknown as Ev[]));
  const snap = await snapshotAt(store, 's-2', 12);
  t.equal(snap.shape, 'counter-v2', 'a snapshot of the new shape replaces the old one');
  froms.length = 0;
  await new Aggregates(store).load('s-2', v2);
  t.same(froms, [13], 'and the next load starts after it');
});

t.test('a snapshot that does not decode is ignored: the stream is folded from its events', async (t) => {
  const { store, froms } = await setup(t);
  const a = new Aggregates(store);
  for (let i = 1; i <= 6; i++) await add(a, 's-3', 1n);
  await snapshotAt(store, 's-3', 5);
  await store.writeSnapshot('s-3', { version: 6, shape: 'counter-v1', state: { total: { $bigint: 'not a number' }, adds: 6, last: {} } });
  const errors: unknown[] = [];
  froms.length = 0;
  const loaded = await new Aggregates(store, undefined, (err) => errors.push(err)).load('s-3', counter);
  t.same(froms, [1]);
  t.equal(loaded.state.total, 6n);
  t.equal(errors.length, 1, 'the error is reported');
});

t.test('a snapshot write that fails never fails the command, and is reported', async (t) => {
  const { store } = await setup(t);
  const errors: Array<[unknown, string]> = [];
  let writes = 0;
  store.writeSnapshot = () => { writes++; throw new Error('snapshot store down'); };
  const a = new Aggregates(store, undefined, (err, id) => errors.push([err, id]));
  for (let i = 1; i <= 7; i++) await add(a, 's-4', 1n);
  store.writeSnapshot = () => { writes++; return Promise.reject(new Error('snapshot store still down')); };
  for (let i = 1; i <= 5; i++) await add(a, 's-4', 1n);
  await waitUntil('the second snapshot write attempted and its failure reported', () => writes >= 2 && errors.length >= 2);
  t.equal(writes, 2, 'a write was attempted at 5 and at 10 events');
  t.equal(errors.length, 2, 'both failures reported');
  t.equal(errors[0]![1], 's-4');
  t.equal((await new Aggregates(store).load('s-4', counter)).state.total, 12n, 'every command committed');
  t.equal(await store.readSnapshot('s-4'), undefined);
});

t.test('a snapshot write that never answers does not hold the command up', async (t) => {
  const { store } = await setup(t);
  store.writeSnapshot = () => new Promise<void>(() => undefined);
  const a = new Aggregates(store);
  for (let i = 1; i <= 6; i++) await add(a, 's-5', 1n);
  t.equal((await a.load('s-5', counter)).version, 6, 'all six committed while the fifth one\'s snapshot hangs');
});
