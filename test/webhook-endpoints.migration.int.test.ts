// Migration 023 (CONTRACT.md §11): a merchant's deliveries and attempts from before endpoints become
// those of its first endpoint, whose id is the merchant id (commands/webhook-endpoints.ts adopts the
// URL under that id); an event that had no URL gets no delivery. Down and up again.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import * as m023 from '../infra/migrations/023_webhook_endpoints.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';

t.comment(`on ${dbLabel}`);

t.test('deliveries and attempts from before endpoints belong to the first endpoint (id = merchant id)', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  await m023.down(knex);

  const merchant = randomUUID();
  const at = new Date('2026-11-26T06:00:00Z');
  const row = (status: string, version: number, extra: Record<string, unknown> = {}) => ({
    id: randomUUID(), merchant_id: merchant, event: 'payin.completed', resource_type: 'payin', resource_id: `r${version}`,
    stream_id: `payin-r${version}`, stream_version: version, body: '{}', delivery_status: status,
    created_at: at, recorded_at: at, updated_at: at, ...extra,
  });
  const delivered = row('delivered', 1, { attempt_count: 2, scheduled_attempts: 2, delivered_at: at, last_attempt_at: at, last_status_code: 200 });
  const pending = row('pending', 2, { attempt_count: 1, scheduled_attempts: 1, next_attempt_at: at, last_status_code: 500, last_error: 'non-2xx response' });
  const none = row('not_configured', 3);
  await knex('webhook_events').insert([delivered, pending, none]);
  const attempt = (eventId: string, n: number, ok: boolean) => ({
    event_id: eventId, attempt: n, trigger: 'scheduled', url: 'https://h.example', attempted_at: at, duration_ms: 5, status_code: ok ? 200 : 500,
    error: ok ? null : 'non-2xx response', succeeded: ok,
  });
  await knex('webhook_attempts').insert([attempt(delivered.id, 1, false), attempt(delivered.id, 2, true), attempt(pending.id, 1, false)]);

  await m023.up(knex);
  const deliveries = await knex('webhook_deliveries').orderBy('created_at').select('*');
  t.equal(deliveries.length, 2, 'one delivery per event that was sent; none for the one without a URL');
  t.match(deliveries.find((d) => d.event_id === delivered.id), { endpoint_id: merchant, merchant_id: merchant, delivery_status: 'delivered', attempt_count: 2, scheduled_attempts: 2 });
  t.match(deliveries.find((d) => d.event_id === pending.id), { endpoint_id: merchant, delivery_status: 'pending', attempt_count: 1, last_status_code: 500 });
  const attempts = await knex('webhook_attempts').select('event_id', 'endpoint_id', 'attempt');
  t.equal(attempts.length, 3);
  t.ok(attempts.every((a) => a.endpoint_id === merchant), "every attempt names the merchant's first endpoint");

  // The pending one's next attempt is recorded on its delivery and the event's summary follows.
  const r = await knex.raw(`SELECT o_delivery, o_failing_since FROM record_webhook_delivery_attempt(?, ?, 'scheduled', 'https://h.example', ?, 5, 200, NULL, true, false, ?::double precision[], ?, 'webhook.delivery')`,
    [pending.id, merchant, at, [60, 300], at]);
  t.match(r.rows[0].o_delivery, { delivery_status: 'delivered', attempt_count: 2 });
  t.match(await knex('webhook_events').where({ id: pending.id }).first(), { delivery_status: 'delivered', attempt_count: 2 });
  t.equal((await knex('webhook_attempts').where({ event_id: pending.id }).max('attempt as n').first())?.n, 2, 'numbered on at that endpoint');
});
