// ForwardedBatches (the event forwarder on the in-process bus): a batch is safe once nothing up to
// its sequence number is unsettled; batches with nothing published share an entry; the list is
// bounded by merging its oldest entries, which never makes a batch safe sooner.
import t from 'tap';
import { ForwardedBatches } from '../workers/forwarded-batches.ts';

t.test('safe up to the last batch below the lowest unsettled sequence number', async (t) => {
  const b = new ForwardedBatches();
  b.add(10n, 3);
  b.add(20n, 5);
  b.add(30n, 9);
  t.equal(b.takeSafe(3), undefined, 'message 3 unsettled: nothing safe');
  t.equal(b.takeSafe(4), 10n, 'up to 3 settled: the first batch');
  t.equal(b.takeSafe(7), 20n, 'up to 6 settled: the second');
  t.equal(b.takeSafe(7), undefined, 'nothing new');
  t.equal(b.takeSafe(undefined), 30n, 'nothing unsettled: all of it');
  t.equal(b.size, 0);
});

t.test('a batch with nothing published (its events filtered out) moves the entry before it', async (t) => {
  const b = new ForwardedBatches();
  b.add(10n, 3);
  b.add(15n, 3);
  t.equal(b.size, 1);
  t.equal(b.takeSafe(4), 15n);
});

t.test('bounded: the oldest two merge, and the first is then passed only with the second', async (t) => {
  const b = new ForwardedBatches(2);
  b.add(10n, 1);
  b.add(20n, 2);
  b.add(30n, 3); // three entries: 10 and 20 merge into 20
  t.equal(b.size, 2);
  t.equal(b.takeSafe(2), undefined, 'message 1 settled, 2 not: 10 alone is no longer an entry, nothing saved early');
  t.equal(b.takeSafe(3), 20n);
  t.equal(b.takeSafe(undefined), 30n);
  for (let i = 0; i < 1000; i++) b.add(BigInt(i + 100), i + 10);
  t.equal(b.size, 2, 'stays at its bound');
});
