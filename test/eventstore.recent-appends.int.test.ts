// Subscribers take this process's own commits from memory (bench issue 8): only a run that starts
// right after the reader's position and goes on without a gap; anything else reads the table. And a
// wake-up that announces nothing new (our own NOTIFY echo) costs no read.
import t from 'tap';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { RecentAppends } from '../infra/eventstore/recent-appends.ts';
import { systemClock } from '../infra/clock.ts';
import type { RecordedEvent } from '../infra/eventstore/types.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

t.comment(`on ${dbLabel}`);

const ev = (position: number): RecordedEvent => ({
  id: `e${position}`, streamId: 's', version: position, position: BigInt(position), type: 't', data: {}, metadata: {}, createdAt: new Date(0),
});
const positions = (events: RecordedEvent[]) => events.map((e) => Number(e.position));

t.test('RecentAppends: a stream\'s range only when every version in it was committed here', async (t) => {
  const r = new RecentAppends(4);
  const of = (stream: string, version: number, position: number): RecordedEvent => ({ ...ev(position), id: `${stream}${version}`, streamId: stream, version });
  r.add([of('a', 1, 1), of('b', 1, 2), of('a', 2, 3)]);
  r.add([of('a', 4, 5)]); // a's version 3 (position 4) was another process's commit
  t.same(r.range('a', 1, 2)?.map((e) => e.version), [1, 2], 'both versions are here');
  t.same(r.range('a', 2, 2)?.map((e) => e.version), [2]);
  t.equal(r.range('a', 1, 4), undefined, 'version 3 is not here: read the table');
  t.equal(r.range('a', 4, 5), undefined, 'nor is version 5');
  t.equal(r.range('c', 1, 1), undefined, 'a stream never written here');
  r.add([of('b', 2, 6), of('b', 3, 7), of('b', 4, 8), of('b', 5, 9), of('b', 6, 10)]); // over the limit: back to 4
  t.equal(r.range('a', 1, 2), undefined, 'trimmed away');
  t.equal(r.range('a', 4, 4), undefined, "a stream whose every event was trimmed is gone from the index");
  t.same(r.range('b', 3, 6)?.map((e) => e.version), [3, 4, 5, 6], 'what the trim kept');
  t.equal(r.range('b', 1, 6), undefined, 'its start was trimmed');
  t.equal(r.range('b', 2, 3), undefined, 'so is a range that starts before what is kept');
});

t.test("RecentAppends: the default keeps a payin's stream until its settlement at 1,000 pairs a second", async (t) => {
  // The sandbox settles 2 s after the payin: 2,000 pairs of about seven events each are appended in
  // between, and the completion's webhook wants the payin's stream from its first version.
  const r = new RecentAppends();
  let position = 0;
  const at = (streamId: string, version: number): RecordedEvent => ({ ...ev(++position), id: `${streamId}/${version}`, streamId, version });
  r.add([at('payin-p', 1), at('payin-p', 2)]);
  for (let pair = 0; pair < 2000; pair++) {
    r.add([at(`quote-${pair}`, 1), at(`payin-${pair}`, 1), at(`quote-${pair}`, 2), at(`payin-${pair}`, 2),
      at(`payin-${pair}`, 3), at(`payin-${pair}`, 4), at('wallet', pair + 1)]);
  }
  r.add([at('payin-p', 3), at('payin-p', 4)]);
  t.same(r.range('payin-p', 1, 4)?.map((e) => e.version), [1, 2, 3, 4], 'the whole stream, from memory');
});

t.test('RecentAppends: holds at most a sixteenth over its limit, whatever the batches', async (t) => {
  // Its peak is what counts against the service's memory: trimming only at twice the limit held
  // 32,768 events of the default's 16,384 (bench/PROFILE.md §29).
  const r = new RecentAppends(1600);
  let position = 0;
  let most = 0;
  for (let i = 0; i < 3000; i++) {
    const size = 1 + (i % 7);
    r.add(Array.from({ length: size }, (_, k) => ({ ...ev(++position), streamId: `s-${(i + k) % 50}`, version: position })));
    most = Math.max(most, r.size);
  }
  t.ok(most <= 1600 + 100 + 7, `at most ${1600 + 100 + 7} events at once (${most})`);
  t.ok(r.size >= 1600, 'never fewer than the limit once it was reached');
  t.same(positions(r.after(BigInt(position - 1600), 2000)).length, 1600, 'the newest 1,600 in one gap-free run');
  const lastStream = `s-${(2999 + (2999 % 7)) % 50}`; // the last batch's last event
  t.same(r.range(lastStream, position, position)?.map((e) => e.version), [position], 'the newest event by its stream');
  t.equal(r.indexedEvents, r.size, "the index holds exactly the buffer's events (none of the trimmed)");
});

t.test('RecentAppends: only the gap-free run right after the reader', async (t) => {
  const r = new RecentAppends(8);
  r.add([ev(10), ev(11), ev(12)]);
  r.add([ev(15), ev(16)]); // 13 and 14: another process's commits, or rolled-back sequence values
  t.same(positions(r.after(9n, 100)), [10, 11, 12], 'from the start of the run, up to the gap');
  t.same(positions(r.after(10n, 1)), [11], 'at most the limit');
  t.same(positions(r.after(12n, 100)), [], 'the next position (13) is not ours: read the table');
  t.same(positions(r.after(14n, 100)), [15, 16], 'after the gap');
  t.same(positions(r.after(5n, 100)), [], 'a reader behind the buffer reads the table');
  t.same(positions(r.after(16n, 100)), [], 'nothing past the head');
  r.add([ev(17), ev(18)]);
  t.same(positions(r.after(9n, 100)), [10, 11, 12], 'at the limit (8 events): all kept');
  r.add([ev(19), ev(20), ev(21), ev(22)]); // 11 events: back to the newest 8
  t.same(positions(r.after(9n, 100)), [], 'the oldest fell out of the bounded buffer');
  t.same(positions(r.after(14n, 100)), [15, 16, 17, 18, 19, 20, 21, 22], 'down to the newest 8');
  r.add(Array.from({ length: 8 }, (_, i) => ev(23 + i)));
  t.same(positions(r.after(14n, 100)), [], 'never more than the limit past a trim');
  t.same(positions(r.after(22n, 100)), [23, 24, 25, 26, 27, 28, 29, 30]);
  r.add([ev(3)]); // not after the head: never expected; the buffer starts again rather than misorder
  t.same(positions(r.after(2n, 100)), [3]);
  t.same(positions(r.after(20n, 100)), []);
});

t.test('a subscriber right behind our appends gets them all, in order, without reading them back', async (t) => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  await store.start();
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  await store.append([{ streamId: 'before', expectedVersion: 0, events: [{ type: 'x', data: {} }] }]);
  let reads = 0;
  const readAll = store.readAll.bind(store);
  store.readAll = (after, limit) => { reads++; return readAll(after, limit); };
  const seen: bigint[] = [];
  const sub = store.subscribe({ after: 0n, handler: async (events) => { seen.push(...events.map((e) => e.position)); } });
  t.teardown(() => sub.stop());
  await waitUntil('the subscriber to catch up with the first event', () => seen.length >= 1);
  const readsAfterCatchUp = reads;
  const APPENDS = 30;
  for (let i = 0; i < APPENDS; i++) {
    await store.append([{ streamId: `s-${i % 3}`, expectedVersion: Math.floor(i / 3) * 2, events: [{ type: 'x', data: { i } }, { type: 'y', data: { i } }] }]);
  }
  await waitUntil('the subscriber to get every event', () => seen.length >= 1 + APPENDS * 2);
  const all = (await readAll(0n, 1000)).map((e) => e.position);
  t.same(seen, all, 'every event once, in the global order');
  // Without the buffer each append costs a read (and its NOTIFY echo another on PostgreSQL): 30 to 60.
  t.ok(reads - readsAfterCatchUp <= 3, `${reads - readsAfterCatchUp} table reads for ${APPENDS} appends of ours`);
});

t.test('commits of another store instance (another process) in between are read from the table, none skipped', async (t) => {
  const tdb = await testDatabase();
  const ours = new PostgresEventStore(tdb.db, systemClock);
  const theirs = new PostgresEventStore(tdb.db, systemClock);
  await ours.start();
  t.teardown(async () => { await ours.close(); await theirs.close(); await tdb.teardown(); });
  const seen: bigint[] = [];
  const sub = ours.subscribe({ after: 0n, handler: async (events) => { seen.push(...events.map((e) => e.position)); } });
  t.teardown(() => sub.stop());
  for (let i = 0; i < 20; i++) {
    const store = i % 3 === 0 ? theirs : ours;
    await store.append([{ streamId: `m-${i}`, expectedVersion: 0, events: [{ type: 'x', data: { i } }] }]);
  }
  // The other instance's commits may wait for the poll interval.
  await waitUntil('the subscriber to get all 20 events', () => seen.length >= 20);
  t.same(seen, (await ours.readAll(0n, 100)).map((e) => e.position), 'all 20, in order, whoever wrote them');
});

