// Before each webhook attempt the endpoint is looked up as it stands now (workers/webhooks/targets.ts:
// a deleted or disabled one gets nothing): the merchant's endpoints stream and, for a URL set before
// endpoints existed, the merchant's own. Both tails go out as one statement (issue 44: they were two
// round trips one after the other, three times per transfer in the bench's round-trips).
import t from 'tap';
import { caughtUp, startTestApp } from './helpers/app.ts';
import { endpointNow } from '../workers/webhooks/targets.ts';
import { streams } from '../commands/streams.ts';

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
