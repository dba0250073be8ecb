// Before each webhook attempt the endpoint is looked up as it stands now (workers/webhooks/targets.ts:
// a deleted or disabled one gets nothing): the merchant's endpoints stream and, for a URL set before
// endpoints existed, the merchant's own. Both tails go out as one statement (issue 44: they were two
// round trips one after the other, three times per transfer in the bench's round-trips).
import t from 'tap';
import { caughtUp, startTestApp } from './helpers/app.ts';
import { endpointNow } from '../workers/webhooks/targets.ts';
import { streams } from '../commands/streams.ts';
import { startReceiver } from './helpers/webhooks.ts';
import { newCustomer, settledPayins } from './helpers/money.ts';
import { waitUntil } from './helpers/wait.ts';

const EVENT_READ = /FROM events WHERE stream_id|FROM unnest\(.*LATERAL \(SELECT .* FROM events/s;

t.test('an endpoint looked up before an attempt: one read of the event store, the legacy URL found', async (t) => {
  const h = await startTestApp();
  t.teardown(() => h.stop());
  const m = await h.newMerchant();
  const put = await h.admin('PUT', `/admin/merchants/${m.merchantId}/webhook`, { url: 'https://hooks.example.com/in' });
  t.equal(put.status, 200);
  await caughtUp(h); // the workers are idle: the reads counted below are the lookup's
  const s = h.app.services;
  const reads: string[] = [];
  const onQuery = (q: { sql: string }) => { if (EVENT_READ.test(q.sql)) reads.push(q.sql); };
  s.knex.on('query', onQuery);
  t.teardown(() => { s.knex.off('query', onQuery); });
  for (const fresh of [true, false]) {
    if (fresh) {
      s.aggregates.forget(streams.merchant(m.merchantId));
      s.aggregates.forget(streams.webhookEndpoints(m.merchantId));
    }
    reads.length = 0;
    const endpoint = await endpointNow(s, m.merchantId, m.merchantId);
    t.match(endpoint, { id: m.merchantId, url: 'https://hooks.example.com/in', status: 'enabled' }, `the URL set before endpoints is the endpoint (${fresh ? 'nothing cached' : 'cached'})`);
    t.equal(reads.length, 1, `one statement reads both streams (${fresh ? 'nothing cached' : 'cached: their tails'})`);
  }
});

t.test('an attempt reads its delivery and looks its endpoint up at once: the two statements in flight together', async (t) => {
  const h = await startTestApp();
  t.teardown(() => h.stop());
  const rx = await startReceiver();
  t.teardown(() => rx.close());
  const m = await h.newMerchant();
  t.equal((await h.admin('PUT', `/admin/merchants/${m.merchantId}/webhook`, { url: rx.url })).status, 200);
  const payer = await newCustomer(h, m);
  const s = h.app.services;
  // Statements in flight, by knex's id: the delivery's read, and reads of the merchant's streams.
  const inFlight = new Map<string, 'delivery' | 'endpoint'>();
  let together = 0;
  const ids = [streams.merchant(m.merchantId), streams.webhookEndpoints(m.merchantId)].map((id) => `"${id}"`);
  const onQuery = (q: { sql: string; __knexQueryUid: string; bindings?: unknown[] }) => {
    const kind = /FROM webhook_events e\s+LEFT JOIN webhook_deliveries d/.test(q.sql) ? 'delivery'
      : EVENT_READ.test(q.sql) && ids.some((id) => JSON.stringify(q.bindings ?? []).includes(id)) ? 'endpoint' : undefined;
    if (!kind) return;
    if ([...inFlight.values()].some((k) => k !== kind)) together++;
    inFlight.set(q.__knexQueryUid, kind);
  };
  const onAnswer = (_: unknown, q: { __knexQueryUid: string }) => { inFlight.delete(q.__knexQueryUid); };
  s.knex.on('query', onQuery).on('query-response', onAnswer).on('query-error', onAnswer);
  t.teardown(() => { s.knex.off('query', onQuery).off('query-response', onAnswer).off('query-error', onAnswer); });
  await settledPayins(h, m, payer, ['+237670000001']);
  await waitUntil('the payin\'s webhook delivered', () => rx.deliveries.length >= 1);
  t.ok(together >= rx.deliveries.length, `each attempt's two reads were in flight together (${together} times for ${rx.deliveries.length} attempts)`);
});
