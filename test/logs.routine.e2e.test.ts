// Routine lines at debug (issue 31): a health check's or a metrics scraper's answered poll is logged
// at debug, so `LOG_LEVEL=info` shows requests a person acts on; a failed poll and every other
// request stay at info. (The housekeeping jobs' own lines: idempotency-purge.schedule and
// embedded-vacuum tests.)
import t from 'tap';
import { Writable } from 'node:stream';
import { request, startTestApp } from './helpers/app.ts';
import { waitUntil } from './helpers/wait.ts';

let logText = '';
const logStream = new Writable({ write(chunk, _enc, cb) { logText += chunk.toString(); cb(); } });
const h = await startTestApp({ logStream, env: { LOG_LEVEL: 'debug' } });
t.teardown(() => h.stop());

const requestLines = () => logText.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
const levelOf = async (path: string, status: number) => {
  const line = await waitUntil(`the access-log line for ${path} ${status}`, () => requestLines().find((l) => l.path === path && l.status === status));
  return line.level as number;
};

t.test('answered probes at debug; failed ones and other requests at info', async (t) => {
  t.equal((await request(h.url, 'GET', '/healthz')).status, 200);
  t.equal((await request(h.url, 'GET', '/readyz')).status, 200);
  t.equal((await h.admin('GET', '/metrics')).status, 200);
  t.equal(await levelOf('/healthz', 200), 20, 'liveness poll: debug');
  t.equal(await levelOf('/readyz', 200), 20, 'readiness poll: debug');
  t.equal(await levelOf('/metrics', 200), 20, 'scrape: debug');
  t.equal((await request(h.url, 'GET', '/metrics')).status, 401);
  t.equal(await levelOf('/metrics', 401), 30, 'a refused scrape: info');
  const m = await h.newMerchant();
  t.equal((await h.as(m, 'GET', '/wallets')).status, 200);
  t.equal(await levelOf('/wallets', 200), 30, 'a merchant request: info');
});
