// Webhook URL safety with ALLOW_PRIVATE_URLS=false (CONTRACT.md §1), DNS stubbed: http:// and
// names resolving to loopback, private, link-local or mapped addresses are refused when configured;
// a name that resolves public when configured and private when connecting (DNS rebinding) is
// refused at delivery, with no socket opened. The only listener is a TCP counter on 127.0.0.1.
import t from 'tap';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTestApp } from './helpers/app.ts';
import { until, widgetResource, completedWidget, eventsOf, noDeliveryJobsFor } from './helpers/webhooks.ts';
import { registerWebhookResource } from '../workers/webhooks/resources.ts';
import { postWebhook, signedHeaders } from '../workers/webhooks/sender.ts';
import type { Resolver } from '../infra/url-safety.ts';

registerWebhookResource(widgetResource);

// A TCP listener that counts connections: whatever the scheme, a connection attempt shows here.
let connections = 0;
const counter = net.createServer((s) => {
  connections++;
  s.destroy();
});
await new Promise<void>((r) => counter.listen(0, '127.0.0.1', () => r()));
const port = (counter.address() as AddressInfo).port;
t.teardown(() => new Promise<void>((r) => counter.close(() => r())));

const PUBLIC = '93.184.216.34'; // only ever answered at configuration time: nothing connects to it
const lookups: string[] = [];
let rebindCalls = 0;
const resolver: Resolver = async (hostname) => {
  lookups.push(hostname);
  switch (hostname) {
    case 'public.example': return [{ address: PUBLIC, family: 4 }];
    case 'loopback.example': return [{ address: '127.0.0.1', family: 4 }];
    case 'ten.example': return [{ address: '10.1.2.3', family: 4 }];
    case 'metadata.example': return [{ address: '169.254.169.254', family: 4 }];
    case 'mapped.example': return [{ address: '::ffff:127.0.0.1', family: 6 }];
    case 'mixed.example': return [{ address: PUBLIC, family: 4 }, { address: '10.0.0.1', family: 4 }];
    case 'rebind.example':
      rebindCalls++;
      return rebindCalls === 1 ? [{ address: PUBLIC, family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
    default: throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  }
};

const h = await startTestApp({
  resolver,
  env: { ALLOW_PRIVATE_URLS: 'false', WEBHOOK_RETRY_SCHEDULE: '0.05,0.05,0.05,0.05,0.05,0.05', WEBHOOK_TIMEOUT_MS: '2000' },
});
t.teardown(() => h.stop());

t.test('refused at configuration: http://, and names or literals that are not public', async (t) => {
  const m = await h.newMerchant('SSRF config');
  const put = (url: string) => h.admin('PUT', `/admin/merchants/${m.merchantId}/webhook`, { url });
  const refused = [
    'http://public.example/hooks',
    `https://loopback.example:${port}/hooks`,
    'https://ten.example/hooks',
    'https://metadata.example/latest/meta-data',
    'https://mapped.example/hooks',
    'https://mixed.example/hooks',
    `https://127.0.0.1:${port}/hooks`,
    'https://[::ffff:127.0.0.1]/hooks',
    'https://169.254.169.254/latest/meta-data',
    'https://10.0.0.8/hooks',
    'https://unknown.example/hooks',
  ];
  for (const url of refused) {
    const r = await put(url);
    t.equal(r.status, 400, `${url} refused`);
    t.equal(r.body.error?.details?.[0]?.field, 'url');
  }
  const got = await h.admin('GET', `/admin/merchants/${m.merchantId}`);
  t.equal(got.body.webhook_url, null, 'nothing was configured');
  t.equal((await put('https://public.example/hooks')).status, 200, 'a public https URL is accepted');
  t.equal(connections, 0, 'no socket opened');
});

t.test('DNS rebinding: public at configuration, private at connect time: refused at delivery, no socket opened', async (t) => {
  const m = await h.newMerchant('Rebinding');
  const url = `https://rebind.example:${port}/hooks`;
  const r = await h.admin('PUT', `/admin/merchants/${m.merchantId}/webhook`, { url });
  t.equal(r.status, 200, 'public when configured');
  t.equal(rebindCalls, 1);
  const id = await completedWidget(h, m);
  const ev = await until(async () => {
    const [e] = await eventsOf(h, m, id);
    return e?.delivery_status === 'failed' ? e : undefined;
  }, 'failed after the schedule');
  t.equal(ev.attempts.length, 7);
  for (const a of ev.attempts) {
    t.equal(a.status_code, null);
    t.match(a.error, /^refused: refused non-public address for rebind\.example/);
  }
  t.ok(rebindCalls >= 8, 'the name was resolved again at connect time, on every attempt');
  await noDeliveryJobsFor(h, ev.id); // nothing more can be attempted
  t.equal(connections, 0, 'no socket was opened to the private address');
});

t.test('the sender refuses what a looser policy may have let in: http:// and private IP literals', async (t) => {
  const policy = { allowPrivate: false, schemes: ['https:' as const], resolver };
  const headers = signedHeaders('whsec_test', '{}', 'widget.completed', '00000000-0000-4000-8000-000000000000', new Date());
  for (const url of [`http://127.0.0.1:${port}/hooks`, `https://127.0.0.1:${port}/hooks`, `https://[::ffff:127.0.0.1]:${port}/hooks`, `http://public.example:${port}/hooks`]) {
    const res = await postWebhook({ url, body: '{}', headers, timeoutMs: 1000, policy });
    t.equal(res.ok, false);
    t.equal(res.statusCode, null);
    t.match(res.error, /^refused: /, `${url} refused`);
  }
  const before = lookups.length;
  const viaDns = await postWebhook({ url: `https://loopback.example:${port}/hooks`, body: '{}', headers, timeoutMs: 1000, policy });
  t.match(viaDns.error, /^refused: refused non-public address for loopback\.example/);
  t.equal(lookups.length, before + 1, 'decided by the connect-time lookup');
  t.equal(connections, 0, 'no socket opened');
});
