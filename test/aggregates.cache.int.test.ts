// Inside `transact` the aggregate cache is trusted without a read (bench issue 8), and still never
// decides wrongly: a lagging cache (another process wrote) conflicts on append, and a refusal or a
// "nothing to do" decided on cached state is confirmed on fresh state before it stands. Two
// Aggregates instances on one store play two processes.
import t from 'tap';
import { Aggregates } from '../commands/aggregates.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { systemClock } from '../infra/clock.ts';
import type { CommandDecider, Decider, DomainEvent } from '../domain/decider.ts';
import { DomainError } from '../domain/errors.ts';
import { DecisionTooOld, toNew } from '../commands/aggregates.ts';
import { MAX_DECISION_AGE_MS } from '../domain/wallet.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';

t.comment(`on ${dbLabel}`);

type Ev = DomainEvent<'added', { n: number }>;
interface St { total: number; adds: number }
const counter: Decider<St, Ev> = {
  initialState: () => ({ total: 0, adds: 0 }),
  evolve: (s, e) => ({ total: s.total + e.data.n, adds: s.adds + 1 }),
};

async function setup(t: { teardown(fn: () => unknown): void }) {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  let reads = 0;
  const readStream = store.readStream.bind(store);
  store.readStream = (id, from, to) => { reads++; return readStream(id, from, to); };
  return { store, a: new Aggregates(store), b: new Aggregates(store), reads: () => reads };
}

/** Adds n to the stream (whatever its state). */
const add = (agg: Aggregates, id: string, n: number) => agg.transact([id], async (tx) => {
  const s = await tx.load(id, counter);
  return { appends: [{ streamId: id, expectedVersion: s.version, events: toNew([{ type: 'added', data: { n } }], {}) }], result: s.state };
});

t.test('a stream this process wrote is decided on without a read, and its cache moves on with the append', async (t) => {
  const { a, reads } = await setup(t);
  await add(a, 'c-1', 1);
  const before = reads();
  for (let i = 0; i < 5; i++) await add(a, 'c-1', 1);
  t.equal(reads() - before, 0, 'no stream read for five commands in a row');
  t.same((await a.load('c-1', counter)).state, { total: 6, adds: 6 }, 'the state a fresh read folds');
});

t.test('assumeNew: a stream id drawn moments ago is created without a read', async (t) => {
  const { a, reads } = await setup(t);
  a.assumeNew('fresh-1', counter);
  const before = reads();
  await add(a, 'fresh-1', 5);
  t.equal(reads() - before, 0);
  t.equal((await a.load('fresh-1', counter)).version, 1);
});

t.test('a lagging cache (another process appended) conflicts and is decided again on fresh state', async (t) => {
  const { a, b } = await setup(t);
  await add(a, 'c-2', 1); // a caches version 1
  await add(b, 'c-2', 10); // b (another process) moves the stream to version 2
  const seen = await add(a, 'c-2', 100);
  t.same(seen.result, { total: 11, adds: 2 }, 'decided on the state after the other process\'s event');
  t.same((await b.load('c-2', counter)).state, { total: 111, adds: 3 }, 'nothing lost, nothing doubled');
});

t.test('a refusal decided on a lagging cache is confirmed on fresh state first', async (t) => {
  const { a, b } = await setup(t);
  await add(a, 'c-3', 1); // a caches total 1
  await add(b, 'c-3', 9); // the store has total 10
  // Spend 5: refused on a total of 1, allowed on 10 (a wallet's balance, say).
  const spend = () => a.transact(['c-3'], async (tx) => {
    const s = await tx.load('c-3', counter);
    if (s.state.total < 5) throw new DomainError('insufficient_balance', 'not enough');
    return { appends: [{ streamId: 'c-3', expectedVersion: s.version, events: toNew([{ type: 'added', data: { n: -5 } }], {}) }], result: s.state.total };
  });
  t.equal((await spend()).result, 10, 'allowed: the refusal on the cached total was not the answer');
  // A refusal that holds on fresh state still stands.
  await add(b, 'c-3', -5); // total 0 in the store; a caches 5
  await t.rejects(spend(), { code: 'insufficient_balance' }, 'refused on fresh state too');
});

t.test('"nothing to do" decided on a lagging cache is confirmed on fresh state first', async (t) => {
  const { a, b } = await setup(t);
  await add(a, 'c-4', 1); // a caches 1 event
  await add(b, 'c-4', 1); // the store has 2
  // Append a marker once the stream has 2 events; nothing to do before.
  const r = await a.transact(['c-4'], async (tx) => {
    const s = await tx.load('c-4', counter);
    if (s.state.adds < 2) return { appends: [], result: 'not yet' };
    return { appends: [{ streamId: 'c-4', expectedVersion: s.version, events: toNew([{ type: 'added', data: { n: 0 } }], {}) }], result: 'marked' };
  });
  t.equal(r.result, 'marked');
  t.equal((await b.load('c-4', counter)).version, 3);
});

/** Writes the price stream's total into the order stream: the order reads the price, never writes it. */
const order = (agg: Aggregates, orderId: string, priceId: string) => {
  let attempts = 0;
  const done = agg.transact([orderId], async (tx) => {
    attempts++;
    const price = await tx.read(priceId, counter);
    const o = await tx.load(orderId, counter);
    return { appends: [{ streamId: orderId, expectedVersion: o.version, events: toNew([{ type: 'added', data: { n: price.state.total } }], {}) }], result: price.state.total };
  });
  return done.then((r) => ({ ...r, attempts }));
};

t.test('tx.read: a stream read from the cache without a read, held unchanged until the commit', async (t) => {
  const { a, reads } = await setup(t);
  await add(a, 'price-1', 7); // a caches the price at version 1
  const before = reads();
  const r = await order(a, 'order-1', 'price-1');
  t.equal(r.result, 7);
  t.equal(r.attempts, 1);
  t.equal(reads() - before, 1, 'one read: the order stream (not cached), never the cached price');
  t.equal((await a.load('price-1', counter)).version, 1, 'nothing written to the stream read');
});

t.test('tx.read: a stream another process moved since it was cached fails the append, and the decision is made again on it', async (t) => {
  const { a, b } = await setup(t);
  await add(a, 'price-2', 7); // a caches 7
  await add(b, 'price-2', 3); // another process: the price is 10 now
  const r = await order(a, 'order-2', 'price-2');
  t.equal(r.attempts, 2, 'decided twice');
  t.equal(r.result, 10, 'on the price as it was when the order committed');
  t.same((await b.load('order-2', counter)).state, { total: 10, adds: 1 }, 'one order, at the new price');
});

t.test('tx.read of a stream that does not exist: remembered empty, and still held unchanged (at version 0) until the commit', async (t) => {
  const { a, b, reads } = await setup(t);
  await order(a, 'order-3', 'price-none'); // reads the absent price once
  let before = reads();
  const again = await order(a, 'order-3', 'price-none');
  t.equal(again.result, 0);
  t.equal(reads() - before, 0, 'the absent stream is not read again (nor the order, cached by its append)');
  await add(b, 'price-none', 5); // another process creates it
  before = reads();
  const moved = await order(a, 'order-3', 'price-none');
  t.equal(moved.attempts, 2, 'the append at "still empty" failed: decided again');
  t.equal(moved.result, 5, 'on the price as it is at the commit');
  t.ok(reads() - before >= 1, 'read once it was found moved');
});

t.test('tx.read of a stream the attempt also writes: its expected version is the check', async (t) => {
  const { a } = await setup(t);
  await add(a, 'both-1', 1);
  const r = await a.transact(['both-1'], async (tx) => {
    const seen = await tx.read('both-1', counter);
    const s = await tx.load('both-1', counter);
    return { appends: [{ streamId: 'both-1', expectedVersion: s.version, events: toNew([{ type: 'added', data: { n: seen.state.total } }], {}) }], result: s.version };
  });
  t.equal(r.result, 1);
  t.equal((await a.load('both-1', counter)).version, 2, 'written once, not refused as "written and unchanged"');
});

t.test('peek answers from the cache only for a stream known to exist', async (t) => {
  const { a, reads } = await setup(t);
  a.assumeNew('p-1', counter); // cached at version 0: not known to exist
  let before = reads();
  t.equal((await a.peek('p-1', counter)).version, 0);
  t.equal(reads() - before, 1, 'version 0 in the cache: read');
  await add(a, 'p-1', 3);
  before = reads();
  t.equal((await a.peek('p-1', counter)).state.total, 3);
  t.equal(reads() - before, 0, 'known to exist: no read');
});

t.test('yesFromCache: a "yes" may come from the cache, a "no" is asked again of a fresh read', async (t) => {
  const { a, b, reads } = await setup(t);
  await add(a, 'y-1', 1); // a caches one event
  await add(b, 'y-1', 1); // another process appends what makes the answer "yes" (a leg started later)
  const hasTwo = (s: St) => s.adds >= 2;
  let before = reads();
  t.equal(await a.yesFromCache('y-1', counter, hasTwo), true, 'the lagging cache said no; the store says yes');
  t.equal(reads() - before, 1, 'the "no" cost one read');
  before = reads();
  t.equal(await a.yesFromCache('y-1', counter, (s) => s.adds >= 1), true);
  t.equal(reads() - before, 0, 'a "yes" from the cache costs no read');
  t.equal(await a.yesFromCache('y-1', counter, (s) => s.adds >= 5), false, 'a "no" that holds on the store stands');
});

t.test('execute: a command given as a function is built again for the attempt after a conflict (its time read then)', async (t) => {
  const { a, b } = await setup(t);
  const stamped: CommandDecider<St & { at: string[] }, DomainEvent<'stamped', { at: string }>, { at: string }> = {
    initialState: () => ({ total: 0, adds: 0, at: [] }),
    evolve: (s, e) => ({ ...s, adds: s.adds + 1, at: [...s.at, e.data.at] }),
    decide: (c) => [{ type: 'stamped', data: { at: c.at } }],
  };
  await a.execute('c-stamp', stamped, { at: 't0' }, {}); // a caches version 1
  await b.execute('c-stamp', stamped, { at: 't1' }, {}); // another process: a's cache now lags
  let built = 0;
  const { state } = await a.execute('c-stamp', stamped, () => ({ at: `t${2 + built++}` }), {});
  t.equal(built, 2, 'built once for the attempt that conflicted, once for the one that committed');
  t.same(state.at, ['t0', 't1', 't3'], 'the event carries what the committed attempt built');
});

t.test('a decision older than MAX_DECISION_AGE_MS when it would be appended is made again with a fresh time (CONTRACT §17)', async (t) => {
  const { a, store } = await setup(t);
  const realNow = performance.now.bind(performance);
  let offsetMs = 0;
  performance.now = () => realNow() + offsetMs;
  t.teardown(() => { performance.now = realNow; });
  const decidedAt: number[] = [];
  await a.transact(['aged-1'], async (tx) => {
    const s = await tx.load('aged-1', counter);
    decidedAt.push(decidedAt.length + 1);
    // The first attempt stalls past the bound (waiting on a lock, a slow read) after deciding.
    if (decidedAt.length === 1) offsetMs += MAX_DECISION_AGE_MS + 1;
    return { appends: [{ streamId: 'aged-1', expectedVersion: s.version, events: toNew([{ type: 'added', data: { n: decidedAt.length } }], {}) }], result: undefined };
  });
  t.same(decidedAt, [1, 2], 'decided twice');
  const events = await store.readStream('aged-1');
  t.same(events.map((e) => e.data), [{ n: 2 }], 'only the fresh decision is appended');

  // Stalled every time: nothing is appended, and the caller is told (the API answers 503, retryable).
  let attempts = 0;
  await t.rejects(a.transact(['aged-2'], async (tx) => {
    const s = await tx.load('aged-2', counter);
    attempts++;
    offsetMs += MAX_DECISION_AGE_MS + 1;
    return { appends: [{ streamId: 'aged-2', expectedVersion: s.version, events: toNew([{ type: 'added', data: { n: 1 } }], {}) }], result: undefined };
  }), DecisionTooOld);
  t.ok(attempts > 1, `tried again (${attempts} attempts)`);
  t.same(await store.readStream('aged-2'), [], 'nothing appended');
});
