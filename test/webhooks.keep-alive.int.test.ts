// Webhook deliveries keep their connection between attempts (bench issue 8: a TCP connection per
// webhook), retry once on a fresh one when the endpoint closed the kept socket, and never share a
// socket between URL policies (one opened where private addresses are allowed is not reused where
// they are not).
import t from 'tap';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { postWebhook, signedHeaders } from '../workers/webhooks/sender.ts';

async function server(opts: { resetSecondRequest?: boolean } = {}) {
  const sockets = new Set<Socket>();
  const served = new WeakMap<Socket, number>();
  let connections = 0;
  let requests = 0;
  const srv = http.createServer((req, res) => {
    requests++;
    const n = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, n);
    // A kept connection the endpoint gives up on just as the next request arrives.
    if (opts.resetSecondRequest && n === 2) return void req.socket.resetAndDestroy();
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  srv.on('connection', (s) => { connections++; sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    stats: () => ({ connections, requests }),
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); srv.close(() => r()); }),
  };
}

const headers = signedHeaders('whsec_test', '{}', 'widget.completed', '00000000-0000-4000-8000-000000000000', new Date());
const open = { allowPrivate: true, schemes: ['https:' as const, 'http:' as const] };

t.test('five deliveries to one endpoint: one connection', async (t) => {
  const rx = await server();
  t.teardown(() => rx.close());
  for (let i = 0; i < 5; i++) {
    const r = await postWebhook({ url: rx.url, body: '{}', headers, timeoutMs: 2000, policy: open });
    t.equal(r.ok, true);
  }
  t.same(rx.stats(), { connections: 1, requests: 5 });
});

t.test('a kept connection reset by the endpoint: the attempt is made again on a new one', async (t) => {
  const rx = await server({ resetSecondRequest: true });
  t.teardown(() => rx.close());
  t.equal((await postWebhook({ url: rx.url, body: '{}', headers, timeoutMs: 2000, policy: open })).ok, true);
  const again = await postWebhook({ url: rx.url, body: '{}', headers, timeoutMs: 2000, policy: open });
  t.equal(again.ok, true, again.error ?? 'delivered');
  t.same(rx.stats(), { connections: 2, requests: 3 }, 'reset on the kept connection, answered on a new one');
});

t.test('another URL policy never reuses the socket', async (t) => {
  const rx = await server();
  t.teardown(() => rx.close());
  const resolver = async () => [{ address: '127.0.0.1', family: 4 }];
  const loose = { ...open, resolver };
  const strict = { allowPrivate: false, schemes: ['https:' as const, 'http:' as const], resolver };
  const host = rx.url.replace('127.0.0.1', 'hooks.example');
  t.equal((await postWebhook({ url: host, body: '{}', headers, timeoutMs: 2000, policy: loose })).ok, true, 'allowed where private addresses are');
  const refused = await postWebhook({ url: host, body: '{}', headers, timeoutMs: 2000, policy: strict });
  t.equal(refused.ok, false);
  t.match(refused.error, /^refused: /, 'the stricter policy checks its own connection');
  t.equal(rx.stats().requests, 1);
});
