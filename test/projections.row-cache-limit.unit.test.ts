// The row cache keeps at most its limit: the rows written longest ago go first, a row written again
// counts as new, and a batch larger than the limit keeps its own newest rows.
import t from 'tap';
import { RowCache } from '../projections/row-cache.ts';

const row = (version: number) => ({ version, events: [] });
const kept = (c: RowCache, ids: string[]) => ids.filter((id) => c.get('t', id) !== undefined);

t.test('the oldest rows go first; a row written again is new', async (t) => {
  const c = new RowCache(3);
  c.begin(0n);
  for (const id of ['a', 'b', 'c']) c.put('t', id, row(1));
  c.commit(1n);
  c.begin(1n);
  c.put('t', 'a', row(2)); // written again: now the newest
  c.put('t', 'd', row(1));
  c.commit(2n);
  t.same(kept(c, ['a', 'b', 'c', 'd']), ['a', 'c', 'd'], 'b was the oldest');
  t.equal(c.get('t', 'a')!.version, 2);
});

t.test('a batch of more rows than the limit keeps its newest', async (t) => {
  const c = new RowCache(1000);
  c.begin(0n);
  const ids = Array.from({ length: 5000 }, (_, i) => `s${i}`);
  for (const id of ids) c.put('t', id, row(1));
  c.commit(1n);
  const left = kept(c, ids);
  t.equal(left.length, 1000);
  t.same(left, ids.slice(4000), 'the last 1,000 written');
});

t.test("the default limit spans a payin's settlement at 1,000 pairs a second", async (t) => {
  // The sandbox settles a payin 2 s after it starts: 2,000 pairs, a quote row and a payin row each,
  // are written in between. The payin's row must still be there to fold its settlement onto.
  const c = new RowCache();
  let at = 0n;
  c.begin(at);
  c.put('payins', 'settles-later', row(2));
  c.commit(++at);
  for (let batch = 0; batch < 200; batch++) {
    c.begin(at);
    for (let i = 0; i < 10; i++) {
      c.put('quotes', `q${batch}-${i}`, row(2));
      c.put('payins', `p${batch}-${i}`, row(2));
    }
    c.commit(++at);
  }
  t.equal(c.get('payins', 'settles-later')?.version, 2, 'still cached after 4,000 other rows');
});
