// KYC file URLs with ALLOW_PRIVATE_URLS=false (CONTRACT.md §1), DNS stubbed: nothing in the fetch
// path can be pointed at this machine's services. Refused at submission: http://, IP literals that
// are not public (127.0.0.1, [::1], [::ffff:127.0.0.1], 169.254.169.254, 100.64.x, 10.x, a decimal
// 127.0.0.1) and names resolving to them; refused at connect time: a name public at submission and
// loopback when fetched (DNS rebinding); refused mid-way: a redirect from an allowed host to any of
// them. Every case asserts that no socket was opened: the only listener that could be reached is a
// TCP counter on 127.0.0.1, and it must count 0. No traffic goes to a public or private address.
import t from 'tap';
import net from 'node:net';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { startTestApp } from './helpers/app.ts';
import { newCustomer, passport, reviewed } from './helpers/kyc.ts';
import type { Resolver, UrlPolicy } from '../infra/url-safety.ts';
import { fetchLimited, type Transport } from '../infra/safe-fetch.ts';
import { MAX_KYC_FILE_BYTES } from '../workers/kyc-review.ts';

// A TCP listener that counts connections: whatever the scheme, a connection attempt shows here.
let connections = 0;
const counter = net.createServer((sock) => {
  connections++;
  sock.destroy();
});
await new Promise<void>((r) => counter.listen(0, '127.0.0.1', () => r()));
const port = (counter.address() as AddressInfo).port;
t.teardown(() => new Promise<void>((r) => counter.close(() => r())));

const PUBLIC = '93.184.216.34'; // answered by the stub only; nothing ever connects to it
const lookups: string[] = [];
let rebindCalls = 0;
const resolver: Resolver = async (hostname) => {
  lookups.push(hostname);
  switch (hostname) {
    case 'public.example': return [{ address: PUBLIC, family: 4 }];
    case 'redirector.example': return [{ address: PUBLIC, family: 4 }];
    case 'loopback.example': return [{ address: '127.0.0.1', family: 4 }];
    case 'localhost': return [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
    case 'ten.example': return [{ address: '10.1.2.3', family: 4 }];
    case 'metadata.example': return [{ address: '169.254.169.254', family: 4 }];
    case 'cgnat.example': return [{ address: '100.64.1.2', family: 4 }];
    case 'mapped.example': return [{ address: '::ffff:127.0.0.1', family: 6 }];
    case 'mixed.example': return [{ address: PUBLIC, family: 4 }, { address: '10.0.0.1', family: 4 }];
    case 'rebind.example':
      rebindCalls++;
      return rebindCalls === 1 ? [{ address: PUBLIC, family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
    default: throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  }
};

const h = await startTestApp({ resolver, env: { ALLOW_PRIVATE_URLS: 'false', KYC_FETCH_TIMEOUT_MS: '1000' } });
t.teardown(() => h.stop());
const s = h.app.services;

const forbidden = [
  `https://127.0.0.1:${port}/id.png`,
  `https://[::1]:${port}/id.png`,
  `https://[::ffff:127.0.0.1]:${port}/id.png`,
  `https://2130706433:${port}/id.png`, // 127.0.0.1 written as one number
  `https://0x7f.1:${port}/id.png`, // and in hex
  'https://169.254.169.254/latest/meta-data/iam/security-credentials/',
  'https://[fd00:ec2::254]/latest/meta-data/',
  'https://100.64.0.1/id.png',
  'https://10.0.0.8/id.png',
  'https://192.168.1.1/id.png',
  'https://0.0.0.0/id.png',
  `https://loopback.example:${port}/id.png`,
  `https://localhost:${port}/id.png`,
  'https://ten.example/id.png',
  'https://metadata.example/latest/meta-data',
  'https://cgnat.example/id.png',
  `https://mapped.example:${port}/id.png`,
  'https://mixed.example/id.png',
];

t.test('refused at submission: http://, non-public literals and names; 400 naming the field; nothing recorded; no socket', async (t) => {
  const m = await h.newMerchant();
  const c = await newCustomer(h, m);
  for (const url of ['http://public.example/id.png', ...forbidden, 'https://unknown.example/id.png']) {
    const r = await h.as(m, 'POST', `/customers/${c}/kyc`, { documents: [passport({ front_file_url: 'https://public.example/ok.png', back_file_url: url })] });
    t.equal(r.status, 400, `${url} refused`);
    t.equal(r.body.error?.code, 'bad_request');
    t.same(r.body.error?.details?.map((d: { field: string }) => d.field), ['documents.0.back_file_url'], `${url}: only the refused field is named`);
  }
  t.equal((await h.as(m, 'GET', `/customers/${c}/kyc`)).body.kyc_status, 'not_started', 'nothing recorded');
  t.equal(connections, 0, 'no socket opened');
});

t.test('DNS rebinding: public at submission, loopback when fetched: the document is rejected, no socket opened', async (t) => {
  const m = await h.newMerchant();
  const c = await newCustomer(h, m);
  const r = await h.as(m, 'POST', `/customers/${c}/kyc`, { documents: [passport({ front_file_url: `https://rebind.example:${port}/id.png` })] });
  t.equal(r.status, 201, 'public when submitted (the first answer)');
  const done = await reviewed(h, m, c);
  t.equal(done.kyc_status, 'rejected');
  t.equal(done.documents[0].rejection_reason, 'front_file_url: rebind.example resolves to a non-public address');
  t.ok(rebindCalls >= 2, 'resolved again at connect time');
  t.equal(connections, 0, 'no socket opened to the loopback address');
});

const policy: UrlPolicy = { allowPrivate: false, schemes: ['https:'], resolver };
const limits = { timeoutMs: 1000, maxBytes: MAX_KYC_FILE_BYTES, maxRedirects: 5, headBytes: 4100 };

t.test('the fetcher refuses every forbidden URL itself (a looser check upstream would not help), no socket', async (t) => {
  for (const url of [`http://127.0.0.1:${port}/id.png`, `http://public.example:${port}/id.png`, `ftp://public.example/id.png`, ...forbidden]) {
    const r = await fetchLimited(url, policy, limits);
    t.match(r, { ok: false, code: 'unsafe_url' }, url);
  }
  const before = lookups.length;
  const viaDns = await fetchLimited(`https://loopback.example:${port}/id.png`, policy, limits);
  t.match(viaDns, { ok: false, code: 'unsafe_url', message: 'loopback.example resolves to a non-public address' });
  t.equal(lookups.length, before + 1, 'decided by the connect-time lookup');
  t.equal(connections, 0, 'no socket opened');
});

t.test('a redirect from an allowed host to a forbidden one is refused before connecting', async (t) => {
  // The allowed host (redirector.example, public in DNS) is played by a local server that answers
  // 302 to the forbidden URL; the test transport sends only that host's requests to it.
  const redirects: string[] = [];
  const redirector = http.createServer((req, res) => {
    const to = decodeURIComponent((req.url ?? '/').slice('/to/'.length));
    redirects.push(to);
    res.writeHead(302, { location: to });
    res.end();
  });
  await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => redirector.close(() => r())));
  const redirectorPort = (redirector.address() as AddressInfo).port;
  const transport: Transport = (url, options, onResponse) => {
    // Any other host goes the real way, with the fetcher's connect-time lookup.
    if (url.hostname !== 'redirector.example') return (url.protocol === 'https:' ? https : http).request(url, options, onResponse);
    const { lookup: _lookup, ...rest } = options;
    return http.request({ ...rest, host: '127.0.0.1', port: redirectorPort, path: url.pathname + url.search }, onResponse);
  };
  const targets = [
    `https://127.0.0.1:${port}/id.png`,
    `https://[::ffff:127.0.0.1]:${port}/id.png`,
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/id.png',
    `https://loopback.example:${port}/id.png`,
    'https://metadata.example/latest/meta-data/',
    `http://public.example:${port}/id.png`, // a downgrade to http
  ];
  for (const target of targets) {
    const url = `https://redirector.example/to/${encodeURIComponent(target)}`;
    const r = await fetchLimited(url, policy, limits, { transport });
    t.match(r, { ok: false, code: 'unsafe_url' }, `redirect to ${target} refused`);
  }
  t.equal(redirects.length, targets.length, 'the allowed host was reached and answered each time');
  t.equal(connections, 0, 'no socket opened to any redirect target');
});
