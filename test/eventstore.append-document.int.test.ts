// The event store sends a batch's events as one JSON document (migration 018; bench issue 8: as
// `jsonb[]` arrays node-postgres copied every event's data twice to escape it): the function keeps
// the document's order for the positions, stores each event's data and metadata as sent, stamps
// the batch's time, and answers as migration 014's did. On PGlite, and on PostgreSQL when
// DATABASE_URL is set.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { systemClock } from '../infra/clock.ts';
import { dbLabel, testDatabase } from './helpers/db.ts';

const awkward = {
  quote: 'say "hi"', backslash: 'C:\\path\\to', newline: 'a\nb', unicode: 'é ✓ 𝄞', nested: { list: [1, '2', { three: null }], empty: {} },
  big: '12345678901234567890.000001', flag: true,
};

t.test(`${dbLabel}: the append function takes the events as one document`, async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const at = '2026-11-25T10:00:00.000Z';
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  const doc = [
    { s: 'doc-a', v: 1, i: ids[0], t: 'x.created', d: awkward, m: { requestId: 'r1' } },
    { s: 'doc-b', v: 1, i: ids[1], t: 'y.created', d: { n: 1 }, m: {} },
    { s: 'doc-a', v: 2, i: ids[2], t: 'x.changed', d: { n: 2 }, m: { causationId: ids[0] } },
  ];
  const r = await tdb.db.knex.raw<{ rows: Array<Record<string, unknown>> }>(
    'SELECT global_position, stream_id, stream_version, event_id, type, data, metadata, created_at, conflict FROM event_store_append(?, ?, ?, ?::jsonb, ?, ?, ?, ?)',
    [42, ['doc-a', 'doc-b'], [0, 0], JSON.stringify(doc), at, ['doc-a', 'doc-b'], [2, 1], null],
  );
  t.same(r.rows.map((x) => x.event_id), ids, 'the answer in the document\'s order');
  const positions = r.rows.map((x) => BigInt(x.global_position as string));
  t.ok(positions[0]! < positions[1]! && positions[1]! < positions[2]!, 'positions follow the document');
  t.same(r.rows.map((x) => [x.stream_id, x.stream_version, x.type, x.conflict]), [
    ['doc-a', 1, 'x.created', false], ['doc-b', 1, 'y.created', false], ['doc-a', 2, 'x.changed', false],
  ]);
  t.same(r.rows[0]!.data, awkward, 'data stored as sent: quotes, backslashes, new lines, astral characters, nesting');
  t.same(r.rows.map((x) => x.metadata), doc.map((e) => e.m));
  t.same(r.rows.map((x) => new Date(x.created_at as string).toISOString()), [at, at, at], 'the batch\'s time');
  const streams = await tdb.db.knex('streams').whereIn('stream_id', ['doc-a', 'doc-b']).orderBy('stream_id').select('stream_id', 'version');
  t.same(streams, [{ stream_id: 'doc-a', version: 2 }, { stream_id: 'doc-b', version: 1 }], 'the streams\' versions');

  const stale = await tdb.db.knex.raw<{ rows: Array<Record<string, unknown>> }>(
    'SELECT stream_id, stream_version, conflict FROM event_store_append(?, ?, ?, ?::jsonb, ?, ?, ?, ?)',
    [42, ['doc-a'], [0], JSON.stringify([{ s: 'doc-a', v: 1, i: randomUUID(), t: 'x.created', d: {}, m: {} }]), at, ['doc-a'], [1], null],
  );
  t.same(stale.rows, [{ stream_id: 'doc-a', stream_version: 2, conflict: true }], 'a stream that moved: nothing written, its version back');
});

t.test(`${dbLabel}: the store's appends read back as they were sent`, async (t) => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  const results = await Promise.all(Array.from({ length: 12 }, (_, i) =>
    store.append([{ streamId: `doc-s${i % 3}`, expectedVersion: 'any', events: [{ type: 't', data: { ...awkward, i }, metadata: { requestId: `r${i}` } }] }])));
  for (const [i, r] of results.entries()) t.same(r.events[0]!.data, { ...awkward, i }, `append ${i}: its data back`);
  const all = await store.readAll(0n, 100);
  t.equal(all.length, 12);
  t.same(all.map((e) => e.position), [...all.map((e) => e.position)].sort((a, b) => (a < b ? -1 : 1)), 'in position order');
  for (const e of all) t.same(e.data, { ...awkward, i: (e.data as { i: number }).i });
  t.same(all.map((e) => e.metadata.requestId).sort(), Array.from({ length: 12 }, (_, i) => `r${i}`).sort());
});
