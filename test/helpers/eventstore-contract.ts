// The event-store contract: every adapter must pass it. Called by one test file per adapter.
import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { WrongExpectedVersion, type EventStore, type RecordedEvent } from '../../infra/eventstore/types.ts';

export interface ContractStore {
  store: EventStore;
  teardown(): Promise<void>;
  /**
   * Another store instance on the same backend with connections of its own, as another process
   * would have (undefined where the backend allows one instance only, like PGlite). Closed by
   * teardown.
   */
  another?(): Promise<EventStore>;
}

export function eventStoreContract(t: Test, make: () => Promise<ContractStore>): void {
  const stream = (p: string) => `${p}-${randomUUID()}`;

  t.test('append then read a stream in order', async (t) => {
    const { store, teardown } = await make();
    t.teardown(teardown);
    const s = stream('order');
    const r1 = await store.append([{ streamId: s, expectedVersion: 0, events: [{ type: 'a', data: { n: 1 } }, { type: 'b', data: { n: 2 } }] }]);
    t.equal(r1.versions[s], 2);
    const r2 = await store.append([{ streamId: s, expectedVersion: 2, events: [{ type: 'c', data: { n: 3 } }] }]);
    t.ok(r2.position > r1.position, 'positions grow');
    const events = await store.readStream(s);
    t.same(events.map((e) => [e.type, e.version, e.data.n]), [['a', 1, 1], ['b', 2, 2], ['c', 3, 3]]);
    t.same((await store.readStream(s, 3)).map((e) => e.type), ['c'], 'read from a version');
    t.same((await store.readStream(s, 1, 2)).map((e) => e.type), ['a', 'b'], 'read up to a version');
    t.same((await store.readStream(s, 2, 2)).map((e) => e.type), ['b'], 'one version');
    t.same((await store.readStream(s, 2, 9)).map((e) => e.type), ['b', 'c'], 'up to a version past the end');
    t.same(await store.readStream(s, 3, 2), [], 'an empty range');
    t.same(await store.readStream(stream('none')), [], 'a missing stream reads empty');
  });

  t.test('expected version mismatch is a conflict and writes nothing', async (t) => {
    const { store, teardown } = await make();
    t.teardown(teardown);
    const s = stream('conflict');
    await store.append([{ streamId: s, expectedVersion: 0, events: [{ type: 'a', data: {} }] }]);
    await t.rejects(store.append([{ streamId: s, expectedVersion: 0, events: [{ type: 'x', data: {} }] }]), WrongExpectedVersion);
    await t.rejects(store.append([{ streamId: s, expectedVersion: 5, events: [{ type: 'x', data: {} }] }]), WrongExpectedVersion);
    t.equal((await store.readStream(s)).length, 1);
  });

  t.test('a multi-stream append is all or nothing', async (t) => {
    const { store, teardown } = await make();
    t.teardown(teardown);
    const a = stream('multi-a');
    const b = stream('multi-b');
    await store.append([{ streamId: b, expectedVersion: 0, events: [{ type: 'b1', data: {} }] }]);
    await t.rejects(store.append([
      { streamId: a, expectedVersion: 0, events: [{ type: 'a1', data: {} }] },
      { streamId: b, expectedVersion: 0, events: [{ type: 'b2', data: {} }] },
    ]), WrongExpectedVersion);
    t.same(await store.readStream(a), [], 'nothing written to the stream whose check passed');
    const ok = await store.append([
      { streamId: a, expectedVersion: 0, events: [{ type: 'a1', data: {} }] },
      { streamId: b, expectedVersion: 1, events: [{ type: 'b2', data: {} }] },
    ]);
    t.same(ok.versions, { [a]: 1, [b]: 2 });
  });

  t.test('a stream required unchanged: the append commits only if it is at its version, and nothing is written to it', async (t) => {
    const { store, teardown } = await make();
    t.teardown(teardown);
    const read = stream('read');
    const written = stream('written');
    await store.append([{ streamId: read, expectedVersion: 0, events: [{ type: 'r1', data: {} }, { type: 'r2', data: {} }] }]);
    const ok = await store.append([{ streamId: written, expectedVersion: 0, events: [{ type: 'w1', data: {} }] }], { unchanged: [{ streamId: read, version: 2 }] });
    t.same(ok.versions, { [written]: 1 }, 'the written stream only');
    t.same(ok.events.map((e) => e.streamId), [written]);
    t.equal((await store.readStream(read)).length, 2, 'nothing written to the unchanged stream');
    const stale = await store.append([{ streamId: written, expectedVersion: 1, events: [{ type: 'w2', data: {} }] }], { unchanged: [{ streamId: read, version: 1 }] })
      .then(() => undefined, (err: unknown) => err);
    t.ok(stale instanceof WrongExpectedVersion, 'a stream that moved since fails the append');
    t.equal((stale as WrongExpectedVersion).streamId, read, 'naming the unchanged stream');
    t.equal((stale as WrongExpectedVersion).actual, 2);
    t.equal((await store.readStream(written)).length, 1, 'nothing written');
    await t.rejects(store.append([{ streamId: written, expectedVersion: 1, events: [{ type: 'w2', data: {} }] }], { unchanged: [{ streamId: stream('absent'), version: 1 }] }),
      WrongExpectedVersion, 'a stream that does not exist is at version 0');
    const absent = await store.append([{ streamId: written, expectedVersion: 1, events: [{ type: 'w2', data: {} }] }], { unchanged: [{ streamId: stream('absent'), version: 0 }] });
    t.equal(absent.versions[written], 2, 'version 0 holds for a stream that does not exist');
    await t.rejects(Promise.resolve().then(() => store.append([{ streamId: written, expectedVersion: 2, events: [{ type: 'w3', data: {} }] }], { unchanged: [{ streamId: written, version: 2 }] })),
      /both written and required unchanged/, 'a stream both written and required unchanged is refused');
  });

  t.test('an append that moves a stream fails a later append of the same batch that needed it unchanged', async (t) => {
    const { store, teardown } = await make();
    t.teardown(teardown);
    const hot = stream('hot');
    const a = stream('a');
    const b = stream('b');
    await store.append([{ streamId: hot, expectedVersion: 0, events: [{ type: 'h1', data: {} }] }]);
    // Made in one turn: a group-committing store plans them in one batch, in this order.
    const [moved, needed] = await Promise.allSettled([
      store.append([{ streamId: hot, expectedVersion: 1, events: [{ type: 'h2', data: {} }] }, { streamId: a, expectedVersion: 0, events: [{ type: 'a1', data: {} }] }]),
      store.append([{ streamId: b, expectedVersion: 0, events: [{ type: 'b1', data: {} }] }], { unchanged: [{ streamId: hot, version: 1 }] }),
    ]);
    t.equal(moved.status, 'fulfilled', 'the append that moved it commits');
    t.equal(needed.status, 'rejected', 'the append that needed it at version 1 does not');
    t.ok(needed.status === 'rejected' && needed.reason instanceof WrongExpectedVersion);
    t.same(await store.readStream(b), [], 'nothing written by it');
  });

  t.test('metadata, ids and data round-trip', async (t) => {
    const { store, teardown } = await make();
    t.teardown(teardown);
    const s = stream('meta');
    const id = randomUUID();
    await store.append([{ streamId: s, expectedVersion: 'any', events: [{ id, type: 't', data: { amount: '5000', nested: { x: [1, 'y'] } }, metadata: { requestId: 'req-1' } }] }]);
    const [e] = await store.readStream(s);
    t.equal(e!.id, id);
    t.same(e!.data, { amount: '5000', nested: { x: [1, 'y'] } });
    t.equal(e!.metadata.requestId, 'req-1');
    t.ok(e!.createdAt instanceof Date);
  });

  t.test('readAll returns the global order from a checkpoint', async (t) => {
    const { store, teardown } = await make();
    t.teardown(teardown);
    const start = await store.head();
    const s1 = stream('all1');
    const s2 = stream('all2');
    await store.append([{ streamId: s1, expectedVersion: 0, events: [{ type: 'x1', data: {} }] }]);
    await store.append([{ streamId: s2, expectedVersion: 0, events: [{ type: 'x2', data: {} }] }]);
    await store.append([{ streamId: s1, expectedVersion: 1, events: [{ type: 'x3', data: {} }] }]);
    const all = (await store.readAll(start, 100)).filter((e) => e.streamId === s1 || e.streamId === s2);
    t.same(all.map((e) => e.type), ['x1', 'x2', 'x3']);
    const after = await store.readAll(all[0]!.position, 100);
    t.notOk(after.some((e) => e.type === 'x1' && e.streamId === s1), 'strictly after the checkpoint');
  });

  t.test('readAll may leave the metadata out when asked; the rest of each event is the same', async (t) => {
    const { store, teardown } = await make();
    t.teardown(teardown);
    const start = await store.head();
    const s = stream('nometa');
    await store.append([{ streamId: s, expectedVersion: 0, events: [
      { type: 'a', data: { n: 1 }, metadata: { requestId: 'req-a' } },
      { type: 'b', data: { n: 2 }, metadata: { requestId: 'req-b' } },
    ] }]);
    const mine = (events: RecordedEvent[]) => events.filter((e) => e.streamId === s);
    const full = mine(await store.readAll(start, 100));
    const lean = mine(await store.readAll(start, 100, { metadata: false }));
    t.same(full.map((e) => e.metadata.requestId), ['req-a', 'req-b'], 'by default, with it');
    t.same(lean.map(({ metadata: _, ...rest }) => rest), full.map(({ metadata: _, ...rest }) => rest), 'ids, positions, data and times alike');
    for (const e of lean) t.ok(e.metadata.requestId === undefined || e.metadata.requestId === full.find((f) => f.id === e.id)!.metadata.requestId,
      'without it: {} (or, from a store that always reads it, the same)');
  });

  t.test('snapshots: missing reads undefined, the latest wins, never backwards, one stream each', async (t) => {
    const { store, teardown } = await make();
    t.teardown(teardown);
    const s = stream('snap');
    const other = stream('snap-other');
    t.equal(await store.readSnapshot(s), undefined, 'no snapshot yet');
    await store.writeSnapshot(s, { version: 3, shape: 'thing-v1', state: { balance: '12345678901234567890', ids: ['a'], nested: { x: null } } });
    t.same(await store.readSnapshot(s), { version: 3, shape: 'thing-v1', state: { balance: '12345678901234567890', ids: ['a'], nested: { x: null } } }, 'read as written');
    await store.writeSnapshot(s, { version: 7, shape: 'thing-v2', state: { n: 7 } });
    t.same(await store.readSnapshot(s), { version: 7, shape: 'thing-v2', state: { n: 7 } }, 'a newer one replaces it');
    await store.writeSnapshot(s, { version: 5, shape: 'thing-v2', state: { n: 5 } });
    await store.writeSnapshot(s, { version: 7, shape: 'thing-v2', state: { n: -1 } });
    t.same(await store.readSnapshot(s), { version: 7, shape: 'thing-v2', state: { n: 7 } }, 'an older or equal version never replaces it');
    t.equal(await store.readSnapshot(other), undefined, 'another stream has none');
    const from = await store.head();
    await store.append([{ streamId: other, expectedVersion: 0, events: [{ type: 'a', data: {} }] }]);
    const all = await store.readAll(from, 100);
    t.notOk(all.some((e) => e.streamId.includes(s)), 'snapshots are not events: readAll never returns them');
    t.same(await store.readStream(s), [], 'nor the stream they describe');
  });

  t.test('createdAt is the append time, to the millisecond', async (t) => {
    const { store, teardown } = await make();
    t.teardown(teardown);
    const before = Date.now();
    const s = stream('time');
    const [appended] = (await store.append([{ streamId: s, expectedVersion: 0, events: [{ type: 't', data: {} }] }])).events;
    const after = Date.now();
    const [read] = await store.readStream(s);
    t.equal(read!.createdAt.getTime(), appended!.createdAt.getTime(), 'read as appended');
    t.ok(read!.createdAt.getTime() >= before - 1000 && read!.createdAt.getTime() <= after + 1000, `${read!.createdAt.toISOString()} is about now`);
  });

  t.test('8+ concurrent appenders on many streams and one hot stream: a subscriber sees every event once, each stream in order', async (t) => {
    const { store, teardown, another } = await make();
    t.teardown(teardown);
    // Appenders spread over several instances (own pools, own group-commit queues): their
    // transactions really overlap, so commits can come out of sequence order.
    const stores = [store];
    if (another) for (let i = 0; i < 3; i++) stores.push(await another());
    t.comment(`appending through ${stores.length} store instance(s)`);
    const from = await store.head();
    const tag = randomUUID();
    const hot = `hot-${tag}`;
    const writers = 12;
    const perWriter = 40;
    const seen = new Map<string, RecordedEvent>();
    const duplicates: string[] = [];
    const lastVersion = new Map<string, number>();
    const reorders: string[] = [];
    let lastPosition = from;
    let positionsOutOfOrder = 0;
    const expected = writers * perWriter * 2;
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const sub = store.subscribe({
      after: from,
      batchSize: 37,
      handler: async (batch) => {
        for (const e of batch) {
          if (e.position <= lastPosition) positionsOutOfOrder++;
          lastPosition = e.position;
          if (e.data.tag !== tag) continue;
          if (seen.has(e.id)) duplicates.push(e.id);
          seen.set(e.id, e);
          const prev = lastVersion.get(e.streamId) ?? 0;
          if (e.version !== prev + 1) reorders.push(`${e.streamId}: ${prev} -> ${e.version}`);
          lastVersion.set(e.streamId, e.version);
        }
        if (seen.size >= expected) resolveDone();
      },
    });
    const appendHot = async (w: number, i: number) => {
      // Hot stream: no expected version, every writer contends for the same stream.
      await stores[(w + i) % stores.length]!.append([{ streamId: hot, expectedVersion: 'any', events: [{ type: 'hot', data: { tag, w, i } }] }]);
    };
    await Promise.all(Array.from({ length: writers }, async (_, w) => {
      const own = `own-${tag}-${w}`;
      for (let i = 0; i < perWriter; i++) {
        await stores[w % stores.length]!.append([{ streamId: own, expectedVersion: i, events: [{ type: 'own', data: { tag, w, i } }] }]);
        await appendHot(w, i);
      }
    }));
    const timeout = setTimeout(resolveDone, 30_000);
    await done;
    clearTimeout(timeout);
    await sub.stop();
    t.equal(seen.size, expected, `saw all ${expected} events`);
    t.same(duplicates, [], 'no event delivered twice');
    t.same(reorders, [], 'every stream in version order');
    t.equal(positionsOutOfOrder, 0, 'global positions strictly increase');
    t.equal(lastVersion.get(hot), writers * perWriter, 'hot stream has every event');
  });
}
