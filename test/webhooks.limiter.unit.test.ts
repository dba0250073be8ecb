// The per-merchant delivery limiter: an attempt over the bound is put back for about one of that
// merchant's recent attempts, so a fast endpoint's burst waits milliseconds, a hanging one's seconds.
import t from 'tap';
import { BUSY_RETRY_MIN_MS, KeyedLimiter } from '../workers/webhooks/delivery.ts';

t.test('put-backs follow the merchant\'s own attempt durations, within bounds', async (t) => {
  const l = new KeyedLimiter(2);
  t.ok(l.tryAcquire('fast') && l.tryAcquire('fast'), 'two slots');
  t.notOk(l.tryAcquire('fast'), 'a third is refused');
  l.release('fast', 5);
  l.release('fast', 5);
  const fast = Array.from({ length: 50 }, () => l.busyDelayMs('fast', 10_000));
  t.ok(fast.every((d) => d >= BUSY_RETRY_MIN_MS * 0.5 && d <= BUSY_RETRY_MIN_MS * 1.5), `a 5 ms endpoint: ${Math.min(...fast)}–${Math.max(...fast)} ms`);
  t.ok(BUSY_RETRY_MIN_MS <= 50, 'a healthy endpoint\'s burst is not held for hundreds of milliseconds');
  l.tryAcquire('slow');
  l.release('slow', 8000);
  const slow = Array.from({ length: 50 }, () => l.busyDelayMs('slow', 10_000));
  t.ok(slow.every((d) => d >= 4000 && d <= 12_000), `an 8 s endpoint: ${Math.min(...slow)}–${Math.max(...slow)} ms`);
  const capped = Array.from({ length: 50 }, () => l.busyDelayMs('slow', 1000));
  t.ok(capped.every((d) => d <= 1500), 'never longer than about the time-out');
});

t.test('a quick merchant\'s attempt over the bound waits for the next slot instead of being put back', async (t) => {
  const l = new KeyedLimiter(2, { queueIfTypicalUnderMs: 100, maxWaiting: 2, maxWaitMs: 5_000 });
  t.ok(l.tryAcquire('fast'), 'a first attempt');
  l.release('fast', 5); // the merchant answers in 5 ms
  t.ok(await l.acquire('fast') && await l.acquire('fast'), 'two slots');
  let third: boolean | undefined;
  const waiting = l.acquire('fast').then((got) => { third = got; });
  await new Promise((r) => setTimeout(r, 20));
  t.equal(third, undefined, 'the third waits (no put-back)');
  const started = Date.now();
  l.release('fast', 5);
  await waiting;
  t.equal(third, true, 'and gets the released slot');
  t.ok(Date.now() - started < 1000, 'at once, not after a put-back delay');
  t.notOk(l.tryAcquire('fast'), 'the slot was handed over: still two in flight');
  const fourth = l.acquire('fast');
  const fifth = l.acquire('fast');
  t.equal(await l.acquire('fast'), false, 'beyond the waiting bound: put back at once');
  l.release('fast', 5);
  l.release('fast', 5);
  t.same(await Promise.all([fourth, fifth]), [true, true], 'waiters served in order as slots free up');
});

t.test('a slow, unknown or silent merchant\'s attempts never wait for a slot', async (t) => {
  // A long wait bound: an attempt that queued would take 10 s to come back, one put back comes back
  // at once (the bound between them is loose so that a loaded machine's scheduling cannot matter).
  const l = new KeyedLimiter(1, { queueIfTypicalUnderMs: 100, maxWaiting: 4, maxWaitMs: 10_000 });
  t.ok(await l.acquire('new'), 'a slot');
  let started = Date.now();
  t.equal(await l.acquire('new'), false, 'no attempt finished yet: put back, not queued');
  t.ok(Date.now() - started < 5_000, 'at once');
  t.ok(l.tryAcquire('slow'));
  l.release('slow', 8000);
  t.ok(await l.acquire('slow'));
  started = Date.now();
  t.equal(await l.acquire('slow'), false, 'an 8 s endpoint: put back, not queued (it would hold the kind\'s slots)');
  t.ok(Date.now() - started < 5_000, 'at once');
  const short = new KeyedLimiter(1, { queueIfTypicalUnderMs: 100, maxWaiting: 4, maxWaitMs: 50 });
  t.ok(short.tryAcquire('quick'));
  short.release('quick', 5);
  t.ok(await short.acquire('quick'));
  t.equal(await short.acquire('quick'), false, 'a quick one whose slot is not released within the wait: put back after it');
  short.release('quick', 5);
  t.ok(short.tryAcquire('quick'), 'the timed-out waiter did not take the slot released after it gave up');
});
