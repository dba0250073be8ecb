// Idempotency claims and outcomes of concurrent requests share one statement (bench issue 8: two
// statements per create were two round trips each), with the same answers as one by one: each new
// key is claimed by exactly one request, a second request with a key already in the batch or in the
// table is sent to the locking path (in progress, replay or conflict).
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { IdempotencyStore, type HeldClaim } from '../commands/idempotency.ts';
import { systemClock } from '../infra/clock.ts';
import { DomainError } from '../domain/errors.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';

t.comment(`on ${dbLabel}`);

t.test('50 new keys at once: one INSERT, one UPDATE; every outcome stored; a duplicate key in the batch runs once', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const store = new IdempotencyStore(tdb.db.knex, systemClock);
  const merchant = randomUUID();
  const keys = Array.from({ length: 50 }, (_, i) => `k-${i}`);
  const sql: string[] = [];
  const on = (q: { sql: string }) => { sql.push(q.sql.trim()); };
  tdb.db.knex.on('query', on);
  const claims = await Promise.all(keys.map((k) => store.claim(merchant, k, 'POST', '/things', 'h')));
  await Promise.all(claims.map((c, i) => store.complete(c as HeldClaim, 201, { i })));
  tdb.db.knex.removeListener('query', on);
  t.ok(claims.every((c) => c.kind === 'run' && c.fresh), 'each new key claimed');
  t.equal(new Set(claims.map((c) => (c.kind === 'run' ? c.resourceId : ''))).size, 50, 'each with its own resource id');
  t.equal(sql.filter((q) => q.startsWith('INSERT INTO idempotency_keys')).length, 1, 'one INSERT for 50 claims');
  t.equal(sql.filter((q) => q.startsWith('UPDATE idempotency_keys')).length, 1, 'one UPDATE for 50 outcomes');
  const replays = await Promise.all(keys.map((k) => store.claim(merchant, k, 'POST', '/things', 'h')));
  t.same(replays.map((r) => (r.kind === 'replay' ? r.body : undefined)), keys.map((_, i) => ({ i })), 'each key replays its own outcome');

  // The same new key twice in one batch: one runs, the other is told it is in progress.
  const twice = await Promise.allSettled([
    store.claim(merchant, 'dup', 'POST', '/things', 'h'),
    store.claim(merchant, 'dup', 'POST', '/things', 'h'),
  ]);
  t.equal(twice.filter((r) => r.status === 'fulfilled' && r.value.kind === 'run').length, 1, 'one runs');
  const refused = twice.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
  t.ok(refused && refused.reason instanceof DomainError && refused.reason.code === 'idempotency_in_progress', 'the other: in progress');
  // Another body with a key of the batch: a conflict, as before.
  await t.rejects(store.claim(merchant, 'k-3', 'POST', '/things', 'other'), { code: 'idempotency_conflict' });
});

t.test('outcomes travel as one JSON document and are stored as sent: every character (NUL, a lone surrogate), key order, null and string bodies', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const store = new IdempotencyStore(tdb.db.knex, systemClock);
  const merchant = randomUUID();
  const bodies: unknown[] = [
    { z: 1, a: { y: 'quote " and backslash \\ and \\" both', x: [1, '2', null] }, é: 'Côte d’Ivoire 🇨🇮', nl: 'a\nb\tc' },
    { error: { code: 'insufficient_funds', message: 'He said "no"', details: [] } },
    'a bare string with "quotes"',
    null,
    { nul: 'a\u0000b', lone: 'x\ud800y', seps: '\u2028\u2029' },
  ];
  const updates: Array<{ bindings: unknown[] }> = [];
  const on = (q: { sql: string; bindings?: unknown[] }) => { if (q.sql.trim().startsWith('UPDATE idempotency_keys')) updates.push({ bindings: q.bindings ?? [] }); };
  tdb.db.knex.on('query', on);
  const claims = await Promise.all(bodies.map((_, i) => store.claim(merchant, `doc-${i}`, 'POST', '/things', 'h')));
  const held = await Promise.all(claims.map((c, i) => store.complete(c as HeldClaim, 200 + i, bodies[i])));
  tdb.db.knex.removeListener('query', on);
  t.same(held, bodies.map(() => true), 'every outcome stored');
  t.equal(updates.length, 1, 'one UPDATE');
  t.equal(updates[0]!.bindings.length, 1, 'its outcomes as one parameter (no text[] array whose bodies node-postgres escapes one by one)');
  const rows = await tdb.db.knex.raw<{ rows: Array<{ key: string; response_status: number; text: string | null }> }>(
    'SELECT key, response_status, response_body::text AS text FROM idempotency_keys WHERE merchant_id = ? ORDER BY key', [merchant]);
  t.same(rows.rows.map((r) => [r.response_status, r.text]), bodies.map((b, i) => [200 + i, JSON.stringify(b)]),
    'each body stored as the text JSON.stringify gave it (key order and escapes kept, NUL and a lone surrogate included)');
  const replays = await Promise.all(bodies.map((_, i) => store.claim(merchant, `doc-${i}`, 'POST', '/things', 'h')));
  t.same(replays.map((r) => (r.kind === 'replay' ? [r.status, r.body] : undefined)), bodies.map((b, i) => [200 + i, b]), 'each key replays its own outcome');
});
