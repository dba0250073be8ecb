// Migration 035 (issue 44): the functions that make webhook delivery jobs lease them to their caller
// in the same transaction, at most as many as the caller has free slots, and say whether jobs are
// left for a claim; the scheduler runs what it is handed at once, and gives back what it cannot run.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import type { Knex } from 'knex';
import { Scheduler, type LeasedJob } from '../infra/scheduler.ts';
import { systemClock } from '../infra/clock.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

t.comment(`on ${dbLabel}`);
const log = pino({ level: 'silent' });
const KIND = 'webhook.delivery';

/** A webhook event row for the recording procedure, fanned out to `endpoints`. */
function eventRow(merchant: string, stream: string, version: number, endpoints: string[], prev: string | null = null) {
  const at = new Date().toISOString();
  return {
    id: randomUUID(), merchant_id: merchant, event: 'payin.completed', resource_type: 'payin', resource_id: stream, customer_id: null,
    stream_id: stream, stream_version: version, prev_event_id: prev, body: '{}', delivery_status: 'pending', next_attempt_at: at,
    created_at: at, recorded_at: at, updated_at: at, fanout_endpoints: endpoints,
  };
}

async function record(knex: Knex, rows: unknown[], lease: { leaseId: string; lockedUntil: Date; limit: number }) {
  const r = await knex.raw<{ rows: Array<{ o_inserted: string[]; o_scheduled: boolean; o_leased: LeasedJob[] }> }>(
    'CALL record_webhook_events_fanout_leased(?::jsonb, ?::text, ?::timestamptz, ?::uuid, ?::timestamptz, ?::integer, NULL::uuid[], NULL::boolean, NULL::jsonb)',
    [JSON.stringify(rows), KIND, new Date(), lease.leaseId, lease.lockedUntil, lease.limit],
  );
  return r.rows[0]!;
}

const jobsOf = (knex: Knex, eventId: string) => knex('jobs').where('key', 'like', `auto:${eventId}:%`).orderBy('key').select('key', 'lease_id', 'attempts', 'locked_until');

t.test('recording: the first attempts leased to the caller, within its limit; the rest left for a claim', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  const merchant = randomUUID();
  const [e1, e2, e3] = [randomUUID(), randomUUID(), randomUUID()];
  const leaseId = randomUUID();
  const lockedUntil = new Date(Date.now() + 60_000);

  const one = eventRow(merchant, `payin-${randomUUID()}`, 1, [e1, e2, e3]);
  const r = await record(knex, [one], { leaseId, lockedUntil, limit: 2 });
  t.same(r.o_inserted, [one.id]);
  t.equal(r.o_leased.length, 2, 'two of the three endpoints\' jobs leased: the caller had two free slots');
  t.ok(r.o_leased.every((j) => j.kind === KIND && j.lease_id === leaseId && j.attempts === 1), 'answered as a claim answers them');
  t.match(r.o_leased[0]!.payload, { eventId: one.id, merchantId: merchant, trigger: 'scheduled' });
  t.equal(r.o_scheduled, true, 'one job left for a claim');
  const jobs = await jobsOf(knex, one.id);
  t.equal(jobs.filter((j) => j.lease_id === leaseId).length, 2, 'leased in the database');
  t.equal(jobs.filter((j) => j.lease_id === null && j.attempts === 0).length, 1, 'the third free for any process');

  const none = eventRow(merchant, `payin-${randomUUID()}`, 1, [e1]);
  const r0 = await record(knex, [none], { leaseId: randomUUID(), lockedUntil, limit: 0 });
  t.same(r0.o_leased, [], 'no free slot: nothing leased');
  t.equal(r0.o_scheduled, true, 'its job is left for a claim');

  // Recorded again (a redelivered message) with slots free: nothing made; the job still free is taken.
  const again = await record(knex, [one], { leaseId: randomUUID(), lockedUntil, limit: 10 });
  t.same(again.o_inserted, [], 'recorded again: nothing inserted');
  t.same(again.o_leased.map((j) => j.key), jobs.filter((j) => j.lease_id === null).map((j) => j.key), 'the job left for a claim leased now');
  t.equal(again.o_scheduled, false, 'nothing left for a claim');
  const third = await record(knex, [one], { leaseId: randomUUID(), lockedUntil, limit: 10 });
  t.same([third.o_leased, third.o_scheduled], [[], false], 'a third time: every job held by a lease, none taken again');
});

t.test('an attempt that ends a delivery: its successor\'s job leased to the caller', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  const merchant = randomUUID();
  const endpoint = randomUUID();
  const stream = `payin-${randomUUID()}`;
  const first = eventRow(merchant, stream, 1, [endpoint]);
  const second = eventRow(merchant, stream, 2, [endpoint], first.id);
  const r = await record(knex, [first, second], { leaseId: randomUUID(), lockedUntil: new Date(Date.now() + 60_000), limit: 10 });
  t.same(r.o_leased.map((j) => j.key), [`auto:${first.id}:${endpoint}`], 'only the first has a job: the second waits for it');

  const attempt = (eventId: string, limit: number, leaseId: string) => knex.raw<{ rows: Array<{ o_released: number; o_leased: LeasedJob[] }> }>(
    `SELECT o_released, o_leased FROM record_webhook_delivery_attempt_leased(?, ?, 'scheduled', 'https://h.example', now(), 5, 200, NULL, true, false,
       ?::double precision[], now(), ?, ?::uuid, ?::timestamptz, ?::integer)`,
    [eventId, endpoint, [60], KIND, leaseId, new Date(Date.now() + 60_000), limit]);
  const leaseId = randomUUID();
  const done = (await attempt(first.id, 1, leaseId)).rows[0]!;
  t.equal(done.o_released, 1, 'the successor released');
  t.same(done.o_leased.map((j) => [j.key, j.lease_id, j.attempts]), [[`auto:${second.id}:${endpoint}`, leaseId, 1]], 'and leased to the caller');

  // Without a free slot, the released successor is left for a claim (the caller nudges its scheduler).
  const third = eventRow(merchant, stream, 3, [endpoint], second.id);
  await record(knex, [third], { leaseId: randomUUID(), lockedUntil: new Date(), limit: 0 });
  const full = (await attempt(second.id, 0, randomUUID())).rows[0]!;
  t.same([full.o_released, full.o_leased], [1, []], 'released, not leased');
  t.match(await jobsOf(knex, third.id), [{ lease_id: null, attempts: 0 }], 'free for any claim');
});

t.test('adopt: leased jobs run at once in free slots; the rest, and all after stop, given back', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  const s = new Scheduler(knex, systemClock, log);
  const ran: string[] = [];
  let hold!: () => void;
  const held = new Promise<void>((r) => (hold = r));
  s.register('k', async (job) => { ran.push(job.key); await held; }, { concurrency: 2 });
  t.equal(s.leaseFor('k').limit, 0, 'before start: no slot to lease for');
  s.start();
  t.teardown(() => s.stop());
  const lease = s.leaseFor('k');
  t.equal(lease.limit, 2, 'after start: the kind\'s free slots');

  // What a database function does: the jobs made and leased in one statement.
  const leased = (await knex.raw<{ rows: LeasedJob[] }>(
    `INSERT INTO jobs (kind, key, payload, due_at, created_at, locked_until, lease_id, attempts)
     SELECT 'k', 'j' || i, '{}'::jsonb, now(), now(), ?, ?, 1 FROM generate_series(1, 3) AS i
     RETURNING kind, key, payload, attempts, due_at, lease_id`, [lease.lockedUntil, lease.leaseId])).rows;
  s.adopt('k', leased);
  t.same(ran.sort(), ['j1', 'j2'], 'two run at once, in the two free slots');
  await waitUntil('the third given back', async () => (await knex('jobs').where({ key: 'j3' }).first())?.lease_id === null);
  t.match(await knex('jobs').where({ key: 'j3' }).first(), { locked_until: null, attempts: 0 }, 'as if never claimed');
  hold();
  await waitUntil('the third claimed and run once a slot is free', () => ran.length === 3);
  t.same(ran.sort(), ['j1', 'j2', 'j3']);

  await s.stop();
  const late = (await knex.raw<{ rows: LeasedJob[] }>(
    `INSERT INTO jobs (kind, key, payload, due_at, created_at, locked_until, lease_id, attempts)
     VALUES ('k', 'late', '{}'::jsonb, now(), now(), now() + interval '1 minute', ?, 1) RETURNING kind, key, payload, attempts, due_at, lease_id`,
    [randomUUID()])).rows;
  s.adopt('k', late);
  await waitUntil('given back after stop', async () => (await knex('jobs').where({ key: 'late' }).first())?.lease_id === null);
  t.equal(ran.length, 3, 'not run after stop');
});
