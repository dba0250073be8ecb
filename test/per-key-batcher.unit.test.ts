// PerKeyBatcher: calls for one key arriving together go as one batch, later ones as the next batch
// once it is done (never two batches of a key at once); keys are independent; two calls for one
// item never share a batch; the limit holds; each call gets its own answer or error.
import t from 'tap';
import { PerKeyBatcher } from '../commands/per-key-batcher.ts';

interface Item { id: string; n: number }

function recording(opts: { fail?: (item: Item) => boolean; throwAll?: boolean; maxBatch?: number } = {}) {
  const batches: Array<{ key: string; ids: string[] }> = [];
  const running = new Map<string, number>();
  let overlap = false;
  const b = new PerKeyBatcher<Item, string>(async (key, items) => {
    running.set(key, (running.get(key) ?? 0) + 1);
    if (running.get(key)! > 1) overlap = true;
    batches.push({ key, ids: items.map((i) => `${i.id}#${i.n}`) });
    await new Promise((r) => setTimeout(r, 5));
    running.set(key, running.get(key)! - 1);
    if (opts.throwAll) throw new Error('the whole batch failed');
    return items.map((i) => (opts.fail?.(i) ? { status: 'rejected', reason: new Error(`item ${i.id} failed`) } : { status: 'fulfilled', value: `${key}:${i.id}#${i.n}` }));
  }, (i) => i.id, opts.maxBatch);
  return { b, batches, overlapped: () => overlap };
}

t.test('calls in one turn are one batch; calls during it, the next', async (t) => {
  const { b, batches, overlapped } = recording();
  const first = ['a', 'b', 'c'].map((id) => b.submit('w', { id, n: 1 }));
  await new Promise((r) => setImmediate(r)); // the first batch is running
  const second = ['d', 'e'].map((id) => b.submit('w', { id, n: 1 }));
  t.same(await Promise.all([...first, ...second]), ['w:a#1', 'w:b#1', 'w:c#1', 'w:d#1', 'w:e#1']);
  t.same(batches, [{ key: 'w', ids: ['a#1', 'b#1', 'c#1'] }, { key: 'w', ids: ['d#1', 'e#1'] }]);
  t.notOk(overlapped(), 'never two batches of one key at once');
});

t.test('keys are batched apart and run side by side', async (t) => {
  const { b, batches } = recording();
  const answers = await Promise.all([b.submit('x', { id: 'a', n: 1 }), b.submit('y', { id: 'a', n: 1 }), b.submit('x', { id: 'b', n: 1 })]);
  t.same(answers, ['x:a#1', 'y:a#1', 'x:b#1']);
  t.same(batches.map((x) => x.key).sort(), ['x', 'y']);
});

t.test('one item twice: the second waits for the next batch, order kept for the rest', async (t) => {
  const { b, batches } = recording();
  const answers = await Promise.all([
    b.submit('w', { id: 'a', n: 1 }), b.submit('w', { id: 'a', n: 2 }), b.submit('w', { id: 'b', n: 1 }), b.submit('w', { id: 'a', n: 3 }),
  ]);
  t.same(answers, ['w:a#1', 'w:a#2', 'w:b#1', 'w:a#3']);
  t.same(batches.map((x) => x.ids), [['a#1', 'b#1'], ['a#2'], ['a#3']]);
});

t.test('the limit: a long queue goes in batches of at most maxBatch', async (t) => {
  const { b, batches } = recording({ maxBatch: 4 });
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => b.submit('w', { id: `p${i}`, n: 0 })));
  t.equal(answers.length, 10);
  t.same(batches.map((x) => x.ids.length), [4, 4, 2]);
});

t.test("each call gets its own error; a batch that throws fails its calls, not the next batch's", async (t) => {
  const { b } = recording({ fail: (i) => i.id === 'bad' });
  const settled = await Promise.allSettled([b.submit('w', { id: 'ok', n: 1 }), b.submit('w', { id: 'bad', n: 1 })]);
  t.equal(settled[0].status, 'fulfilled');
  t.match(settled[1], { status: 'rejected', reason: { message: 'item bad failed' } });

  const thrower = recording({ throwAll: true });
  const all = await Promise.allSettled([thrower.b.submit('w', { id: 'a', n: 1 }), thrower.b.submit('w', { id: 'b', n: 1 })]);
  t.same(all.map((x) => x.status), ['rejected', 'rejected']);
  t.equal(await b.submit('w', { id: 'c', n: 1 }), 'w:c#1', 'a key is usable again after its queue drained');
});
