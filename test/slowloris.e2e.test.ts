// Slowloris (issue 9 point 6): 200 sockets send their request headers one byte at a time, slowly,
// and never finish. Meanwhile ordinary clients must still be answered promptly, and the server must
// close every slow socket itself once the headers time-out has passed (HTTP_HEADERS_TIMEOUT_MS),
// answering 408 with the contract's error body.
//
// Nothing here counts on the machine's speed (issue 45: under load 12 on 2 cores, 8 requests fitted
// in the fixed 2-s window, and a socket's client-side life was 6.5 s). The ordinary requests are a
// fixed number, each sent while all the slow sockets are connected (the attacker replaces those the
// server closed). A slow socket's life is the server's: from accepting the connection to refusing
// it (not from the client's connect call), and how late it was refused after the time-out is
// counted less the time this process waited for a CPU meanwhile (test/helpers/run-queue.ts).
// Client and server share this process, which a loaded machine stops for seconds: Node's check of
// the time-outs is a timer of this loop, late by as much, which is no time the server took.
import t from 'tap';
import net from 'node:net';
import { startTestApp } from './helpers/app.ts';
import { waitUntil } from './helpers/wait.ts';
import { ownTime, runQueueHistory, runQueueWaitMs } from './helpers/run-queue.ts';

const SLOW_SOCKETS = 200;
const ORDINARY_REQUESTS = 12;
const HEADERS_TIMEOUT_MS = 2_000;
/** How often Node looks for expired headers (api/http-server.ts: a quarter of the time-out). */
const CHECK_INTERVAL_MS = HEADERS_TIMEOUT_MS / 4;
const h = await startTestApp({ env: { HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), HTTP_REQUEST_TIMEOUT_MS: '4000' } });
t.teardown(() => h.stop());

interface Slow { socket: net.Socket; connected: boolean; closed: boolean; answer: string }

/** The server's view of each slow connection: refused how long after its acceptance (wall), and how late after the time-out less the wait for a CPU since. */
const server = h.app.server!;
const history = runQueueHistory();
const acceptedAt = new WeakMap<object, number>();
const refused: Array<{ wallMs: number; lateOwnMs: number; lateWaitedMs: number }> = [];
server.on('connection', (s: net.Socket) => acceptedAt.set(s, performance.now()));
server.on('clientError', (err: NodeJS.ErrnoException, s: net.Socket) => {
  const at = acceptedAt.get(s);
  if (err.code !== 'ERR_HTTP_REQUEST_TIMEOUT' || at === undefined) return;
  const now = performance.now();
  const deadline = at + HEADERS_TIMEOUT_MS;
  const lateWaitedMs = now > deadline ? runQueueWaitMs() - history.waitedAt(deadline) : 0;
  refused.push({ wallMs: now - at, lateOwnMs: now - deadline - lateWaitedMs, lateWaitedMs });
});
t.teardown(() => history.stop());

let attacking = true;
const slow: Slow[] = [];
const connectedNow = () => slow.filter((s) => s.connected && !s.closed).length;

/** A slow client; while the attack goes on, one the server closed is replaced (as a real attacker does). */
function slowClient(): Slow {
  const { hostname, port } = new URL(h.url);
  const socket = net.connect(Number(port), hostname);
  const s: Slow = { socket, connected: false, closed: false, answer: '' };
  const text = `GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\nX-Slow: ${'a'.repeat(1000)}`;
  let i = 0;
  const drip = setInterval(() => {
    if (socket.destroyed || i >= text.length) return;
    socket.write(text[i++]!); // one byte at a time, never the blank line that ends the headers
  }, 250);
  socket.on('data', (c: Buffer) => { s.answer += c.toString('utf8'); });
  socket.once('connect', () => { s.connected = true; });
  socket.on('close', () => {
    clearInterval(drip);
    s.closed = true;
    if (attacking) slowClient();
  });
  socket.on('error', () => undefined);
  slow.push(s);
  return s;
}

t.test(`${SLOW_SOCKETS} slowloris sockets do not starve other clients, and are closed by the server`, async (t) => {
  const m = await h.newMerchant('Prompt');
  for (let i = 0; i < SLOW_SOCKETS; i++) slowClient();
  t.teardown(() => { attacking = false; for (const s of slow) s.socket.destroy(); });

  // Ordinary traffic while the slow sockets hold their connections: each request is sent once all
  // of them are connected (the ones the server closed replaced), however long each takes here.
  const latencies: number[] = [];
  const waits: number[] = [];
  const statuses: number[] = [];
  while (statuses.length < ORDINARY_REQUESTS) {
    await waitUntil(`${SLOW_SOCKETS} slow sockets connected`, () => connectedNow() >= SLOW_SOCKETS);
    const took = ownTime();
    const r = await h.as(m, 'GET', '/wallets');
    const { ownMs, waitedMs } = took();
    latencies.push(ownMs);
    waits.push(waitedMs);
    statuses.push(r.status);
  }
  attacking = false;
  const p99 = Math.round([...latencies].sort((a, b) => a - b)[Math.floor(latencies.length * 0.99)] ?? 0);
  t.equal(statuses.length, ORDINARY_REQUESTS, `${statuses.length} ordinary requests, each sent with ${SLOW_SOCKETS} slow sockets connected`);
  t.ok(statuses.every((s) => s === 200), 'every ordinary request answered 200');
  // Starved, a request would wait for a slow socket to go (the headers time-out, 2 s).
  t.ok(p99 < 1000, `p99 latency ${p99} ms under 1 s, less the time the process waited for a CPU (up to ${Math.round(Math.max(...waits))} ms)`);

  // The server closes every slow socket after the headers time-out (checked every CHECK_INTERVAL_MS).
  await waitUntil('every slow socket closed by the server', () => slow.every((s) => s.closed));
  t.equal(refused.length, slow.length, `every slow socket (${slow.length}, replacements included) refused by the server for its headers`);
  // Refused at the latest one check after the time-out, and the refusals' own work: well under a
  // second late, against the minutes a slowloris client keeps its socket from a server that never
  // checks (Node's own interval is 30 s). The wait for a CPU after the time-out is taken out.
  const lifetimes = refused.map((r) => Math.round(r.wallMs)).sort((a, b) => a - b);
  const latest = Math.round(Math.max(...refused.map((r) => r.lateOwnMs)));
  const waited = Math.round(Math.max(...refused.map((r) => r.lateWaitedMs)));
  t.ok(latest <= CHECK_INTERVAL_MS + 500, `refused at most ${latest} ms after the headers time-out (${HEADERS_TIMEOUT_MS} ms; ` +
    `check every ${CHECK_INTERVAL_MS} ms), less up to ${waited} ms waiting for a CPU meanwhile`);
  t.ok(lifetimes[0]! >= HEADERS_TIMEOUT_MS - 100, `none closed before the time-out (the shortest lived ${lifetimes[0]} ms)`);
  const answered408 = slow.filter((s) => /^HTTP\/1\.1 408 /.test(s.answer) && /"code":"bad_request"/.test(s.answer)).length;
  t.equal(answered408, slow.length, 'each told 408 with the error body');
  t.comment(`slowloris: ${SLOW_SOCKETS} slow sockets (${slow.length} with replacements), ${statuses.length} ordinary requests meanwhile ` +
    `(p99 ${p99} ms, non-200=${statuses.filter((s) => s !== 200).length}), closed by the server after ${lifetimes[0]}-${lifetimes[lifetimes.length - 1]} ms ` +
    `(at most ${latest} ms late, less up to ${waited} ms waiting for a CPU)`);
  // After the attack the server still answers.
  t.equal((await h.as(m, 'GET', '/wallets')).status, 200);
});
