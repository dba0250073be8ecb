// Issue 7, point 5: on SIGTERM the service stops taking requests, finishes the ones in flight,
// closes its connections and exits 0; what it answered 2xx is there after a restart. Runs the real
// entry point (`app/main.ts`) embedded, on a data directory of its own.
import t from 'tap';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from './helpers/app.ts';
import { freePort } from './helpers/net.ts';
import { waitUntil } from './helpers/wait.ts';

const ADMIN = 'sigterm-admin-token';
const root = path.resolve(import.meta.dirname, '..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigterm-'));
t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));


async function startService(port: number): Promise<{ child: ChildProcess; exit: Promise<number | null>; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'app/main.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: String(port), ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c) => { out += c; });
  child.stderr!.on('data', (c) => { out += c; });
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const until = Date.now() + 60_000;
  for (;;) {
    const r = await request(`http://127.0.0.1:${port}`, 'GET', '/readyz').catch(() => undefined);
    if (r?.status === 200) break;
    if (Date.now() > until || child.exitCode !== null) throw new Error(`service did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, exit, output: () => out };
}

t.test('SIGTERM: in-flight request finishes, new ones are refused, exit 0, nothing lost', async (t) => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const svc = await startService(port);
  const admin = { authorization: `Bearer ${ADMIN}` };

  // A request in flight: its headers and half its body are sent before SIGTERM, the rest once the
  // service has begun shutting down. `Expect: 100-continue` makes the server say when it has taken
  // the request (its handler started, reading the body): the signal waits for that, not for a pause.
  const body = JSON.stringify({ name: 'Created during shutdown' });
  const half = Math.floor(body.length / 2);
  const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(`${base}/admin/merchants`, {
      method: 'POST', headers: { ...admin, 'content-type': 'application/json', 'content-length': String(body.length), expect: '100-continue' },
    }, (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.on('continue', () => {
      req.write(body.slice(0, half));
      svc.child.kill('SIGTERM');
      waitUntil('the service to begin shutting down', () => /shutting down/.test(svc.output()))
        .then(() => req.end(body.slice(half)), reject);
    });
    req.flushHeaders();
  });

  const inFlight = await answered;
  t.equal(inFlight.status, 201, 'the request in flight when SIGTERM came was answered');
  const merchant = JSON.parse(inFlight.text) as { id: string };

  const refused = await request(base, 'GET', '/healthz').then(() => false, () => true);
  t.ok(refused, 'a new connection after SIGTERM is refused');
  t.equal(await svc.exit, 0, 'the process exits 0');
  t.match(svc.output(), /shutting down/, 'it said why it stopped');

  // A restart on the same data: the embedded database was closed cleanly (its lock released), and
  // what was answered 201 is there.
  const again = await startService(port);
  t.teardown(async () => {
    again.child.kill('SIGTERM');
    await again.exit;
  });
  const read = await request(base, 'GET', `/admin/merchants/${merchant.id}`, { headers: admin });
  t.equal(read.status, 200, 'the merchant created during shutdown is there after a restart');
});
