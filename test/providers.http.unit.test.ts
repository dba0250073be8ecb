// A provider call's connections (infra/providers/http.ts): kept alive between calls; a kept-alive
// connection the provider closed while idle is replaced and the call made again; a call whose
// outcome cannot be known stays in doubt, never "not taken" (it might have reached the provider).
import t, { type Test } from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderHttp, ProviderInDoubt } from '../infra/providers/http.ts';
import { LegNotTaken } from '../infra/providers/types.ts';

interface Server { url: string; server: http.Server; requests: number; connections: number; onRequest?: (req: http.IncomingMessage, res: http.ServerResponse) => void }

async function server(t: Test): Promise<Server> {
  const s = { requests: 0, connections: 0 } as Server;
  s.server = http.createServer((req, res) => {
    s.requests++;
    req.resume();
    req.on('end', () => {
      if (s.onRequest) return s.onRequest(req, res);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ n: s.requests }));
    });
  });
  s.server.on('connection', () => { s.connections++; });
  await new Promise<void>((r) => s.server.listen(0, '127.0.0.1', r));
  s.url = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}`;
  t.teardown(() => new Promise<void>((r) => { s.server.close(() => r()); s.server.closeAllConnections(); }));
  return s;
}

const caught = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);

t.test('calls one after the other share one connection; every status is an answer', async (t) => {
  const s = await server(t);
  const calls = new ProviderHttp('p', 2_000);
  for (let i = 1; i <= 5; i++) t.same((await calls.call(`${s.url}/x`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json, { n: i });
  t.equal(s.connections, 1, 'one connection for five calls');
  s.onRequest = (_req, res) => res.writeHead(503).end('not json');
  t.match(await calls.call(`${s.url}/x`, { method: 'GET', headers: {} }), { status: 503, json: undefined, text: 'not json' });
});

t.test('a kept-alive connection the provider closed while idle: the call goes again on a new one', async (t) => {
  const s = await server(t);
  const calls = new ProviderHttp('p', 2_000);
  await calls.call(`${s.url}/x`, { method: 'GET', headers: {} });
  // The provider drops its idle connection; the call that follows at once is written on it.
  s.server.closeIdleConnections();
  const res = await calls.call(`${s.url}/x`, { method: 'POST', headers: {}, body: '{"leg":1}' });
  t.equal(res.status, 200, 'answered, not in doubt');
  t.equal(s.connections, 2, 'on a new connection');
});

t.test('a kept-alive connection dropped after the request was read, then the provider down: in doubt', async (t) => {
  const s = await server(t);
  const calls = new ProviderHttp('p', 2_000);
  await calls.call(`${s.url}/x`, { method: 'GET', headers: {} });
  // The provider reads the leg, stops listening and drops the connection without an answer: the call
  // made again is refused, yet the first may have been taken.
  s.onRequest = (req) => {
    s.server.close();
    req.socket.destroy();
  };
  const err = await caught(calls.call(`${s.url}/x`, { method: 'POST', headers: {}, body: '{"leg":2}' }));
  t.ok(err instanceof ProviderInDoubt, `in doubt: ${(err as Error).message}`);
  t.equal(s.requests, 2, 'the provider had read it');
});

t.test('nothing listening: certainly not taken; an invalid URL too', async (t) => {
  const s = await server(t);
  const url = s.url;
  await new Promise<void>((r) => s.server.close(() => r()));
  const err = await caught(new ProviderHttp('p', 2_000).call(`${url}/x`, { method: 'POST', headers: {}, body: '{}' }));
  t.ok(err instanceof LegNotTaken, `not taken: ${(err as Error).message}`);
  t.match((err as Error).message, /p unreachable \(ECONNREFUSED\)/);
  t.ok(await caught(new ProviderHttp('p', 2_000).call('not a url', { method: 'GET', headers: {} })) instanceof LegNotTaken);
});

t.test('no answer within the time-out, or an answer cut off: in doubt', async (t) => {
  const s = await server(t);
  s.onRequest = () => {}; // never answers
  const err = await caught(new ProviderHttp('p', 200).call(`${s.url}/x`, { method: 'POST', headers: {}, body: '{}' }));
  t.ok(err instanceof ProviderInDoubt);
  t.match((err as Error).message, /timed out after 200 ms/);
  s.onRequest = (_req, res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('{"par');
    setImmediate(() => res.destroy());
  };
  t.ok(await caught(new ProviderHttp('p', 2_000).call(`${s.url}/x`, { method: 'GET', headers: {} })) instanceof ProviderInDoubt, 'cut off');
});
