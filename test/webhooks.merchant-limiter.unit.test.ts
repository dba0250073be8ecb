// Issue 40 point 2b (workers/webhooks/delivery.ts DeliveryLimiter): attempts in flight are bounded
// per merchant as well as per endpoint, so a merchant's 16 slow endpoints (4 each: 64, every slot of
// the job kind) hold at most a quarter of the worker's slots; an attempt refused by either bound is
// put back for about as long as that bound's attempts take, or, before any has finished, as long as
// they have been running.
import t from 'tap';
import {
  DeliveryLimiter, KeyedLimiter, OVERALL_CONCURRENCY, PER_ENDPOINT_CONCURRENCY, PER_MERCHANT_CONCURRENCY, BUSY_RETRY_MIN_MS,
} from '../workers/webhooks/delivery.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a merchant with 16 endpoints holds at most a quarter of the slots; another merchant gets one at once', async (t) => {
  t.ok(PER_MERCHANT_CONCURRENCY < OVERALL_CONCURRENCY, 'the merchant bound is below the kind\'s');
  t.ok(16 * PER_ENDPOINT_CONCURRENCY >= OVERALL_CONCURRENCY, 'without it, 16 endpoints could take every slot');
  const l = new DeliveryLimiter();
  let granted = 0;
  for (let e = 0; e < 16; e++) {
    for (let i = 0; i < PER_ENDPOINT_CONCURRENCY; i++) if ((await l.acquire('hot', `ep-${e}`, 10_000)) === undefined) granted++;
  }
  t.equal(granted, PER_MERCHANT_CONCURRENCY, `${granted} of the merchant's ${16 * PER_ENDPOINT_CONCURRENCY} attempts run`);
  t.equal(await l.acquire('other', 'ep-other', 10_000), undefined, 'another merchant\'s attempt gets a slot');
  const delay = await l.acquire('hot', 'ep-15', 10_000);
  t.type(delay, 'number', 'the merchant\'s next attempt is put back');
  l.release('hot', 'ep-0', 1900);
  t.equal(await l.acquire('hot', 'ep-15', 10_000), undefined, 'a released slot serves the merchant again');
});

t.test('the endpoint bound still holds under the merchant bound, and a refusal by it takes no merchant slot', async (t) => {
  const l = new DeliveryLimiter();
  for (let i = 0; i < PER_ENDPOINT_CONCURRENCY; i++) t.equal(await l.acquire('m', 'slow', 10_000), undefined);
  t.type(await l.acquire('m', 'slow', 10_000), 'number', 'a fifth attempt at one endpoint is put back');
  let others = 0;
  for (let e = 0; e < 2 * PER_MERCHANT_CONCURRENCY; e++) if ((await l.acquire('m', `ep-${e}`, 10_000)) === undefined) others++;
  t.equal(others, PER_MERCHANT_CONCURRENCY - PER_ENDPOINT_CONCURRENCY, 'the put-back attempt held none of the merchant\'s slots');
});

t.test('a refusal by the merchant bound frees the endpoint slot it took', async (t) => {
  const l = new DeliveryLimiter(new KeyedLimiter(1), new KeyedLimiter(1));
  t.equal(await l.acquire('m', 'a', 10_000), undefined);
  t.type(await l.acquire('m', 'b', 10_000), 'number', 'the merchant\'s one slot is taken');
  t.equal(await l.acquire('n', 'b', 10_000), undefined, 'endpoint b\'s slot was given back (another merchant\'s attempt at the same id gets it)');
});

t.test('put-backs: after the attempts\' durations, or before any has finished, after how long they have been running', async (t) => {
  const l = new KeyedLimiter(1);
  t.ok(l.tryAcquire('k'));
  const fresh = l.busyDelayMs('k', 10_000);
  t.ok(fresh <= BUSY_RETRY_MIN_MS * 1.5, `just started: ${fresh} ms`);
  await sleep(400);
  const running = Array.from({ length: 50 }, () => l.busyDelayMs('k', 10_000));
  t.ok(running.every((d) => d >= 200), `running for 400 ms and nothing finished yet: put back ${Math.min(...running)}–${Math.max(...running)} ms`);
  t.ok(running.every((d) => d <= 1500), 'about that long, jittered');
  const capped = Array.from({ length: 50 }, () => l.busyDelayMs('k', 100));
  t.ok(capped.every((d) => d <= 150), 'never beyond about the time-out');
  l.release('k', 5);
  t.ok(l.tryAcquire('k'));
  await sleep(300);
  const known = Array.from({ length: 50 }, () => l.busyDelayMs('k', 10_000));
  t.ok(known.every((d) => d <= BUSY_RETRY_MIN_MS * 1.5), 'once durations are known (5 ms), they decide: one slow attempt does not hold a healthy backlog');
  l.release('k');
  t.ok(l.tryAcquire('k'), 'released');
});
