// The per-merchant delivery limiter: an attempt over the bound is put back for about one of that
// merchant's recent attempts, so a fast endpoint's burst waits milliseconds, a hanging one's seconds.
import t from 'tap';
import { BUSY_RETRY_MIN_MS, KeyedLimiter } from '../src/workers/webhooks/delivery.ts';

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
