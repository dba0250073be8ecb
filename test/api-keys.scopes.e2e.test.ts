// API key scopes (CONTRACT §18, issue 43 point 5) over HTTP: every merchant operation of the served
// OpenAPI document declares the scope it needs (so a new route cannot forget one); for each resource a
// key with only `<r>:read` reads and is refused its writes naming `<r>:write`, a key with `<r>:write`
// writes, a key without `<r>` is refused both, ["*"] does everything; the admin API answers the
// scopes (create and list), refuses unknown ones naming the entry, and they survive an online rebuild
// of the read model and a restart.
import t, { type Test } from 'tap';
import { startTestApp, type MerchantCreds, type TestApp, type HttpResult } from './helpers/app.ts';
import { operations } from './helpers/openapi-walk.ts';
import { leg, newCustomer, party, quote, until } from './helpers/money.ts';
import { SCOPE_RESOURCES, ALL_SCOPES, type ScopeResource } from '../domain/api-key-scopes.ts';

const first = await startTestApp();
/** The app under test: `first`, then the same database restarted (the last test). */
let h: TestApp = first;
t.teardown(async () => {
  if (h !== first) await h.stop();
  await first.stop();
});
const full = await h.newMerchant('Scopes');
const customer = await newCustomer(h, full);

async function keyWith(scopes: string[] | undefined): Promise<MerchantCreds & { body: any }> {
  const k = await h.admin('POST', `/admin/merchants/${full.merchantId}/api-keys`, scopes ? { scopes } : {});
  if (k.status !== 201) throw new Error(`key create failed: ${k.status} ${k.text}`);
  return { merchantId: full.merchantId, keyId: k.body.id, apiKey: k.body.api_key, apiSecret: k.body.api_secret, body: k.body };
}

interface Probe {
  read: [string, string];
  /** A write and the status it answers once past the scope check (the resource's own answer). */
  write?: (m: MerchantCreds) => Promise<HttpResult>;
  written?: number;
}

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/**
 * One read and one write per resource. Where a write needs what another resource makes (a quote, a
 * settled payin), the write names an unknown one and the answer is that resource's own refusal: it
 * shows the call went past the scope check into the operation.
 */
const PROBES: Record<ScopeResource, Probe> = {
  customers: {
    read: ['GET', '/customers'], written: 201,
    write: (m) => h.as(m, 'POST', '/customers', { first_name: 'Ama', last_name: 'Scope', phone: '+237670000002', country_code: 'CM' }, { idem: true }),
  },
  quotes: { read: ['GET', '/quotes'], written: 201, write: (m) => h.as(m, 'POST', '/quotes/payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'), { idem: true }) },
  payins: {
    read: ['GET', '/payins'], written: 201,
    write: async (m) => {
      const q = await quote(h, full, 'payin', { customer_id: customer, ...leg('CM_MTN_MOMO', 'CM', 'XAF', '5000') });
      return h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', '+237670000001') }, { idem: true });
    },
  },
  payouts: {
    read: ['GET', '/payouts'], written: 400,
    write: (m) => h.as(m, 'POST', '/payouts', {
      quote_id: UNKNOWN, customer_id: customer, payment_reason_text: 'Scope', recipient: { ...party('CM', 'CM_MTN_MOMO', '+237670000003'), recipient_type: 'individual', first_name: 'A', last_name: 'B' },
    }, { idem: true }),
  },
  transfers: { read: ['GET', '/transfers'], written: 404, write: (m) => h.as(m, 'POST', `/transfers/${UNKNOWN}/relaunch-payout`, {}, { idem: true }) },
  refunds: { read: ['GET', '/refunds'], written: 400, write: (m) => h.as(m, 'POST', '/refunds', { payin_id: UNKNOWN }, { idem: true }) },
  payment_links: {
    read: ['GET', '/payment-links'], written: 201,
    write: (m) => h.as(m, 'POST', '/payment-links', { amount: '5000', currency: 'XAF', description: 'Scope' }, { idem: true }),
  },
  wallets: { read: ['GET', '/wallets'] },
  events: { read: ['GET', '/events'] },
  webhooks: {
    read: ['GET', '/webhook-endpoints'], written: 201,
    write: (m) => h.as(m, 'POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks-scopes' }, { idem: true }),
  },
};

const forbidden = (t: Test, r: HttpResult, scope: string, what: string) => {
  t.equal(r.status, 403, `${what}: 403`);
  t.equal(r.body?.error?.code, 'forbidden', `${what}: forbidden`);
  t.match(r.body?.error?.message, scope, `${what}: the message names ${scope}`);
};

t.test('every merchant operation of the served document declares its scope; every scope belongs to a resource', async (t) => {
  const doc = (await h.admin('GET', '/openapi.json')).body;
  const merchantOps = operations(doc).filter((o) => o.auth === 'merchant');
  t.ok(merchantOps.length >= 50, `${merchantOps.length} merchant operations`);
  for (const o of merchantOps) {
    const scope = doc.paths[o.path][o.method.toLowerCase()]['x-scope'];
    t.ok(scope === 'any' || ALL_SCOPES.includes(scope), `${o.method} ${o.path} declares ${scope}`);
    if (scope === 'any') t.ok(['/corridors', '/operators'].includes(o.path), `${o.path}: only the catalogue is open to every key`);
    else t.equal(scope.endsWith(':read'), o.method === 'GET', `${o.method} ${o.path}: a GET reads, anything else writes`);
    if (scope !== 'any') t.ok(doc.paths[o.path][o.method.toLowerCase()].responses['403'], `${o.method} ${o.path} documents its 403`);
  }
  t.equal(doc.paths['/events/stream'].get['x-scope'], 'events:read');
});

for (const resource of SCOPE_RESOURCES) {
  t.test(`${resource}: read-only reads and is refused writes; write writes; none is refused both; * does everything`, async (t) => {
    const p = PROBES[resource];
    const reader = await keyWith([`${resource}:read`]);
    const writer = await keyWith([`${resource}:write`]);
    const other = await keyWith([resource === 'payins' ? 'payouts:write' : 'payins:write']);
    const everything = await keyWith(undefined);
    t.same(reader.body.scopes, [`${resource}:read`]);
    t.same(everything.body.scopes, ['*'], 'the default');
    t.equal((await h.as(reader, ...p.read)).status, 200, `${resource}:read reads`);
    t.equal((await h.as(writer, ...p.read)).status, 200, `${resource}:write reads too`);
    t.equal((await h.as(everything, ...p.read)).status, 200, '* reads');
    forbidden(t, await h.as(other, ...p.read), `${resource}:read`, 'another resource\'s key reading');
    if (!p.write) return;
    forbidden(t, await p.write(reader), `${resource}:write`, `${resource}:read writing`);
    forbidden(t, await p.write(other), `${resource}:write`, 'another resource\'s key writing');
    const written = await p.write(writer);
    t.equal(written.status, p.written, `${resource}:write writes (${written.status} ${written.body?.error?.code ?? ''})`);
    t.equal((await p.write(everything)).status, p.written, '* writes');
  });
}

t.test('history and the event stream need events:read; the catalogue is open to every key', async (t) => {
  const payins = await keyWith(['payins:write']);
  const events = await keyWith(['events:read']);
  forbidden(t, await h.as(payins, 'GET', `/payins/${UNKNOWN}/events`), 'events:read', 'a payin\'s history without events:read');
  t.equal((await h.as(events, 'GET', `/payins/${UNKNOWN}/events`)).status, 404, 'with events:read: the payin is looked for');
  forbidden(t, await h.as(payins, 'GET', '/events/stream'), 'events:read', 'the stream without events:read');
  const stream = await fetch(`${h.url}/events/stream`, { headers: { 'x-api-key': events.apiKey, 'x-api-secret': events.apiSecret } });
  t.equal(stream.status, 200, 'the stream opens with events:read');
  await stream.body?.cancel();
  t.equal((await h.as(payins, 'GET', '/operators')).status, 200);
  t.equal((await h.as(payins, 'GET', '/corridors')).status, 200);
});

t.test('the admin API: scopes normalised on create and list; unknown scopes and "*" among others refused naming the entry', async (t) => {
  const k = await keyWith(['wallets:read', 'refunds:read', 'refunds:write', 'wallets:read']);
  t.same(k.body.scopes, ['refunds:write', 'wallets:read'], 'duplicates gone, refunds:read folded into refunds:write');
  const list = await h.admin('GET', `/admin/merchants/${full.merchantId}/api-keys`);
  t.same(list.body.data.find((x: any) => x.id === k.keyId).scopes, ['refunds:write', 'wallets:read']);
  t.same(list.body.data.find((x: any) => x.id === full.keyId).scopes, ['*'], 'the key made with no scopes');
  const unknown = await h.admin('POST', `/admin/merchants/${full.merchantId}/api-keys`, { scopes: ['payins:read', 'ledger:write'] });
  t.equal(unknown.status, 400);
  t.equal(unknown.body.error.code, 'bad_request');
  t.ok(unknown.body.error.details.some((d: any) => d.field.startsWith('scopes')), `names the field: ${JSON.stringify(unknown.body.error.details)}`);
  const mixed = await h.admin('POST', `/admin/merchants/${full.merchantId}/api-keys`, { scopes: ['payins:read', '*'] });
  t.equal(mixed.status, 400);
  t.same(mixed.body.error.details.map((d: any) => d.field), ['scopes[1]']);
  t.equal((await h.admin('POST', `/admin/merchants/${full.merchantId}/api-keys`, { scopes: [] })).status, 400, 'an empty list');
});

t.test('scopes survive an online rebuild of the read model and a restart', async (t) => {
  const reader = await keyWith(['refunds:read']);
  const started = await h.admin('POST', '/admin/projections/merchants/rebuild');
  t.equal(started.status, 202);
  await until('the merchants rebuild done', async () => {
    const row = (await h.admin('GET', '/admin/projections')).body.data.find((x: { projection: string }) => x.projection === 'merchants');
    return row?.rebuild?.state === 'done';
  });
  t.equal((await h.as(reader, 'GET', '/refunds')).status, 200, 'after the rebuild: reads');
  forbidden(t, await PROBES.refunds.write!(reader), 'refunds:write', 'after the rebuild: still refused');
  await h.app.stop();
  h = await startTestApp({ shareWith: first });
  t.equal((await h.as(reader, 'GET', '/refunds')).status, 200, 'after a restart: reads');
  forbidden(t, await PROBES.refunds.write!(reader), 'refunds:write', 'after a restart: still refused');
  const list = await h.admin('GET', `/admin/merchants/${full.merchantId}/api-keys`);
  t.same(list.body.data.find((x: any) => x.id === reader.keyId).scopes, ['refunds:read']);
});
