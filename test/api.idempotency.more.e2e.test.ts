// Idempotency (CONTRACT.md §6), beyond POST /customers: the key rules on EVERY operation the OpenAPI
// document marks `x-idempotent` (the list is read from the served document, so a new endpoint is
// covered without touching this file), a 401 stores nothing, and expired keys are purged by the
// `idempotency-purge` job on the service's clock.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import type { Knex } from 'knex';
import { startTestApp, request, ADMIN_TOKEN, type MerchantCreds } from './helpers/app.ts';
import { until } from './helpers/money.ts';
import { ManualClock } from '../infra/clock.ts';
import { apiModules } from '../app/registry.ts';
import { IdempotencyStore, IDEMPOTENCY_TTL_MS, requestHash } from '../commands/idempotency.ts';
import { IDEMPOTENCY_PURGE_JOB, IDEMPOTENCY_PURGE_KEY, PURGE_EVERY_MS } from '../workers/idempotency-purge.ts';

const clock = new ManualClock(new Date('2026-06-01T10:00:00.000Z'));
const h = await startTestApp({ clock });
t.teardown(() => h.stop());
const s = h.app.services;

/** The seed's list (merchant-payments-api.md, "Idempotency"): all must be marked. */
const SEED_IDEMPOTENT = [
  'POST /customers', 'POST /quotes/payin', 'POST /quotes/payout', 'POST /quotes/transfer', 'POST /payins',
  'POST /payouts', 'POST /transfers', 'POST /transfers/{transfer_id}/relaunch-payout',
];

interface Op { method: string; path: string; op: any }

function idempotentOps(doc: any): Op[] {
  const out: Op[] = [];
  for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) if (op['x-idempotent']) out.push({ method: method.toUpperCase(), path, op });
  }
  return out;
}

/** A path with each parameter filled with a value its schema accepts (the id of nothing). */
function concretePath({ path, op }: Op): string {
  return path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const schema = (op.parameters ?? []).find((p: any) => p.in === 'path' && p.name === name)?.schema ?? {};
    if (Array.isArray(schema.enum)) return String(schema.enum[0]);
    return schema.format === 'uuid' ? randomUUID() : 'x';
  });
}

function call(m: MerchantCreds, o: Op, key: string | undefined, body: unknown = {}) {
  const headers: Record<string, string> = {};
  if (o.op['x-auth'] === 'merchant') Object.assign(headers, { 'x-api-key': m.apiKey, 'x-api-secret': m.apiSecret });
  if (o.op['x-auth'] === 'admin') headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  if (key !== undefined) headers['idempotency-key'] = key;
  return request(h.url, o.method, concretePath(o), { body, headers });
}

const keysOf = async (merchantId: string) =>
  (await s.knex('idempotency_keys').where({ merchant_id: merchantId }).select('key')).map((r: { key: string }) => r.key).sort();
const eventCount = async () => Number((await s.knex.raw('SELECT count(*)::int AS n FROM events')).rows[0].n);

const doc = (await request(h.url, 'GET', '/openapi.json')).body;
const ops = idempotentOps(doc);
const opNames = ops.map((o) => `${o.method} ${o.path}`);

t.test('the idempotent operations: the seed\'s, as the registered modules declare them, the header required', async (t) => {
  for (const name of SEED_IDEMPOTENT) t.ok(opNames.includes(name), `${name} is x-idempotent`);
  const declared = apiModules.flatMap((m) => Object.entries(m.paths).flatMap(([p, o]) =>
    Object.entries(o).filter(([, op]) => op['x-idempotent']).map(([method]) => `${method.toUpperCase()} ${p}`)));
  t.same([...opNames].sort(), [...declared].sort(), 'the served document lists every module\'s idempotent operation');
  for (const o of ops) {
    const header = (o.op.parameters ?? []).find((p: any) => p.in === 'header' && p.name === 'Idempotency-Key');
    t.ok(header?.required, `${o.method} ${o.path} documents Idempotency-Key as required`);
    t.equal(header?.schema?.maxLength, 255);
  }
});

t.test('every x-idempotent operation: no key → 400 idempotency_key_required, a bad key → 400 naming the header', async (t) => {
  const m = await h.newMerchant('EveryOp');
  const before = await eventCount();
  for (const o of ops) {
    const name = `${o.method} ${o.path}`;
    for (const key of [undefined, '']) {
      const r = await call(m, o, key);
      t.equal(r.status, 400, `${name} without a key (${JSON.stringify(key)})`);
      t.equal(r.body.error?.code, 'idempotency_key_required', name);
      t.notOk(r.body._meta, 'not an idempotent outcome');
    }
    for (const key of ['k'.repeat(256), 'tab\there', 'clé']) {
      const r = await call(m, o, key);
      t.equal(r.status, 400, `${name} with key ${JSON.stringify(key).slice(0, 20)}`);
      t.equal(r.body.error?.code, 'bad_request', name);
      t.same(r.body.error?.details?.map((d: any) => d.field), ['Idempotency-Key'], `${name} names the header`);
    }
  }
  t.same(await keysOf(m.merchantId), [], 'no key stored');
  t.equal(await eventCount(), before, 'nothing appended');
  // The 255-character key is the limit: accepted (the request then runs into its own validation).
  const customers = ops.find((o) => o.method === 'POST' && o.path === '/customers')!;
  const ok = await call(m, customers, 'k'.repeat(255), { first_name: 'Awa', last_name: 'Diop' });
  t.equal(ok.status, 201, '255 characters is accepted');
});

t.test('a request refused with 401 stores nothing: the same key then runs with valid credentials', async (t) => {
  const m = await h.newMerchant('Unauthorized');
  const other = await h.newMerchant('Other');
  const tries: MerchantCreds[] = [
    { ...m, apiSecret: 'sk_wrong' },
    { ...m, apiKey: other.apiKey }, // another merchant's key with this merchant's secret
    { ...m, apiKey: 'pk_unknown' },
  ];
  for (const creds of tries) {
    const r = await h.as(creds, 'POST', '/customers', { first_name: 'Wrong', last_name: 'Body' }, { idem: 'k-401' });
    t.equal(r.status, 401);
    t.equal(r.body.error.code, 'unauthorized');
    t.notOk(r.body._meta);
  }
  t.equal(Number((await s.knex('idempotency_keys').where({ key: 'k-401' }).count<{ n: string }[]>('* as n'))[0]!.n), 0, 'no row for the key, for any merchant');
  // Another body than the refused one: were anything stored, this would be a 409 conflict.
  const ok = await h.as(m, 'POST', '/customers', { first_name: 'Awa', last_name: 'Diop' }, { idem: 'k-401' });
  t.equal(ok.status, 201);
  t.same(ok.body._meta, { idempotency_key: 'k-401', idempotency_replayed: false });
  const again = await h.as(m, 'POST', '/customers', { first_name: 'Awa', last_name: 'Diop' }, { idem: 'k-401' });
  t.same(again.body._meta, { idempotency_key: 'k-401', idempotency_replayed: true }, 'and it is stored from then on');
  t.equal(again.body.id, ok.body.id);
});

t.test('expired keys are purged by the idempotency-purge job, on the service clock', async (t) => {
  const m = await h.newMerchant('Purge');
  const job = await s.knex('jobs').where({ kind: IDEMPOTENCY_PURGE_JOB, key: IDEMPOTENCY_PURGE_KEY }).first();
  t.ok(job, 'the purge is a durable job');
  const person = { first_name: 'Awa', last_name: 'Diop' };
  const old = await h.as(m, 'POST', '/customers', person, { idem: 'purge-old' });
  t.equal(old.status, 201);
  clock.advance(IDEMPOTENCY_TTL_MS - 3600_000);
  t.equal((await h.as(m, 'POST', '/customers', person, { idem: 'purge-young' })).status, 201);
  t.same(await keysOf(m.merchantId), ['purge-old', 'purge-young']);

  // 24 h and 1 s after the first: that key is past its time, the other is not.
  clock.advance(3600_000 + 1000);
  await until('the expired key is purged', async () => !(await keysOf(m.merchantId)).includes('purge-old'));
  await rescheduled();
  t.same(await keysOf(m.merchantId), ['purge-young'], 'the key still within its 24 hours stays');
  const reused = await h.as(m, 'POST', '/customers', { first_name: 'New', last_name: 'Intent' }, { idem: 'purge-old' });
  t.equal(reused.status, 201, 'the purged key serves a new request');
  t.equal(reused.body._meta.idempotency_replayed, false);
  t.not(reused.body.id, old.body.id);

  // The runs an hour apart on the service clock: nothing to take while the young key has time left...
  clock.advance(22 * 3600_000);
  await rescheduled();
  t.same(await keysOf(m.merchantId), ['purge-old', 'purge-young'], 'a run 1 s before 24 hours keeps the young key');
  // ...then it goes, and the reused key (an hour younger) stays.
  clock.advance(PURGE_EVERY_MS);
  await until('the second key is purged', async () => !(await keysOf(m.merchantId)).includes('purge-young'));
  t.same(await keysOf(m.merchantId), ['purge-old']);
});

/** Waits for the purge job to have run at the clock's current time (it is then due an hour later). */
async function rescheduled() {
  await until('the purge ran and is scheduled again', async () => {
    const next = await s.knex('jobs').where({ kind: IDEMPOTENCY_PURGE_JOB, key: IDEMPOTENCY_PURGE_KEY }).first();
    return next && next.locked_until === null && new Date(next.due_at).getTime() === clock.now().getTime() + PURGE_EVERY_MS;
  });
}

t.test('purgeExpired deletes in bounded batches and only what is past its time', async (t) => {
  // From here on the job must not purge behind the tests' back (it is not due until the next hour).
  await s.scheduler.cancel(IDEMPOTENCY_PURGE_JOB, IDEMPOTENCY_PURGE_KEY);
  const m = randomUUID();
  const store = new IdempotencyStore(s.knex, clock);
  // Nothing else expired around: every earlier key is past its time, then gone.
  clock.advance(IDEMPOTENCY_TTL_MS + 1000);
  await store.purgeExpired();
  for (let i = 0; i < 5; i++) await store.claim(m, `batch-${i}`, 'POST', '/x', requestHash(s.secrets, 'POST', '/x', { i }));
  clock.advance(IDEMPOTENCY_TTL_MS + 1000);
  await store.claim(m, 'fresh', 'POST', '/x', requestHash(s.secrets, 'POST', '/x', {}));
  t.equal(await store.purgeExpired(2), 2, 'at most the batch size');
  t.equal((await keysOf(m)).length, 4);
  t.equal(await store.purgeExpired(), 3, 'then the rest');
  t.same(await keysOf(m), ['fresh'], 'the key within its 24 hours stays');
});

t.test('a claim racing the purge (the expired row deleted between its insert and its read) still runs', async (t) => {
  const m = randomUUID();
  const plain = new IdempotencyStore(s.knex, clock);
  const hash = requestHash(s.secrets, 'POST', '/x', { a: 1 });
  await plain.claim(m, 'race', 'POST', '/x', hash);
  clock.advance(IDEMPOTENCY_TTL_MS + 1000);
  // A knex whose transactions delete the row just before the claim reads it, as a purge would.
  let purged = false;
  const racing = new Proxy(s.knex, {
    get(target, prop, receiver) {
      if (prop !== 'transaction') return Reflect.get(target, prop, receiver);
      return (fn: (tx: any) => Promise<unknown>) => target.transaction(async (tx) => {
        const raw = tx.raw.bind(tx);
        const wrapped = new Proxy(tx, {
          get(tt, p, r) {
            if (p !== 'raw') return Reflect.get(tt, p, r);
            return async (sql: string, bindings: readonly Knex.RawBinding[]) => {
              if (/^SELECT \* FROM idempotency_keys/.test(sql) && !purged) {
                purged = true;
                await raw('DELETE FROM idempotency_keys WHERE merchant_id = ? AND key = ?', [m, 'race']);
              }
              return raw(sql, bindings);
            };
          },
        });
        return fn(wrapped);
      });
    },
  });
  const store = new IdempotencyStore(racing as typeof s.knex, clock);
  const claim = await store.claim(m, 'race', 'POST', '/x', requestHash(s.secrets, 'POST', '/x', { a: 2 }));
  t.ok(purged, 'the race happened');
  t.equal(claim.kind, 'run', 'the key is free: the request runs');
  t.same(await keysOf(m), ['race'], 'and holds the key');
});
