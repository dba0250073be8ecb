// Issue 40 point 2d (CONTRACT.md §17): one merchant with the most endpoints it may have (16), each
// answering after 1.9 s, and a burst of its events must not delay another merchant's webhooks. Before
// the per-merchant bound, its 16 endpoints at 4 attempts each took all 64 delivery slots of the
// worker, and the other merchant's webhook waited for one of them to answer (up to 1.9 s).
import t from 'tap';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { startTestApp } from './helpers/app.ts';
import { startReceiver, until, sleep, widgetResource, completedWidget } from './helpers/webhooks.ts';
import { registerWebhookResource } from '../workers/webhooks/resources.ts';

registerWebhookResource(widgetResource);
const SLOW_MS = 1900;
const BURST = 12;
const h = await startTestApp();
t.teardown(() => h.stop());

/** One server behind the slow merchant's 16 endpoint URLs (one path each): answers 200 after SLOW_MS. */
async function slowServer() {
  const state = { received: 0, inFlight: 0, maxInFlight: 0 };
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      state.received++;
      state.maxInFlight = Math.max(state.maxInFlight, ++state.inFlight);
      setTimeout(() => {
        state.inFlight--;
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      }, SLOW_MS);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { state, url, close };
}

t.test("16 endpoints answering after 1.9 s and a burst of events do not delay another merchant's webhook by a second", async (t) => {
  const slow = await slowServer();
  t.teardown(() => slow.close());
  const fast = await startReceiver();
  t.teardown(() => fast.close());

  const busy = await h.newMerchant('Sixteen slow endpoints');
  for (let i = 0; i < 16; i++) {
    const r = await h.as(busy, 'POST', '/webhook-endpoints', { url: `${slow.url}/e${i}` }, { idem: true });
    t.equal(r.status, 201, `endpoint ${i + 1} of 16`);
  }
  const other = await h.newMerchant('Other merchant');
  t.equal((await h.as(other, 'POST', '/webhook-endpoints', { url: fast.url }, { idem: true })).status, 201);
  // The other merchant's path warmed up first: what is measured below is waiting, not first-use costs.
  await completedWidget(h, other);
  await until(() => fast.deliveries.length === 1, 'the warm-up delivery');

  for (let i = 0; i < BURST; i++) await completedWidget(h, busy);
  await until(() => slow.state.inFlight >= 16, 'the slow endpoints busy');

  const delays: number[] = [];
  for (let i = 0; i < 5; i++) {
    const before = Date.now();
    const id = await completedWidget(h, other);
    const d = await until(() => fast.deliveries.find((x) => JSON.parse(x.body).data.id === id), "the other merchant's webhook", 5000);
    // From the event's creation (the widget event is dated when built, before the append) to its receipt.
    const created = Date.parse(JSON.parse(d.body).created_at);
    t.ok(created >= before - 5, 'the envelope is dated at the event');
    delays.push(d.at - before);
    await sleep(300);
  }
  t.comment(`other merchant's webhook after ${delays.join(', ')} ms; the slow merchant: ${slow.state.maxInFlight} attempts in flight at most, ${slow.state.received} received`);
  for (const ms of delays) t.ok(ms < 1000, `delivered ${ms} ms after the event (under a second)`);
  const served = slow.state.received;
  await until(() => slow.state.received > served, "the slow merchant's backlog still served");
  t.ok(slow.state.maxInFlight <= 16, `the slow merchant held ${slow.state.maxInFlight} attempts at once (a quarter of the 64 slots at most)`);
});
