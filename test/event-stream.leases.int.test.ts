// The event streams' leases (api/event-stream/leases.ts): a renewal that finds its rows gone takes
// the slots again under the merchant's count. Two renewals at once (a tick while the last one is still
// running, as on a loaded machine: ticks every lease time / 3) must not count each other's retaken
// rows as the merchant's other streams: none of the three streams may be taken for lost.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { StreamLeases } from '../api/event-stream/leases.ts';
import { testDatabase } from './helpers/db.ts';

const tdb = await testDatabase();
t.teardown(() => tdb.teardown());
const knex = tdb.db.knex;
const live = async (merchantId: string) => Number((await knex('event_stream_leases').where({ merchant_id: merchantId })
  .where('expires_at', '>', knex.raw('now()')).count({ n: '*' }).first() as { n: string }).n);

t.test('renewals that overlap take each lost slot back once, and no stream is lost', async (t) => {
  // A long lease time: only the test's own renewals run.
  const leases = new StreamLeases(knex, 600_000, (err) => t.fail(String(err)));
  t.teardown(() => leases.close());
  const merchantId = randomUUID();
  const lost: number[] = [];
  for (const i of [0, 1, 2]) t.ok(await leases.take(merchantId, 3, () => lost.push(i)), `stream ${i} has a slot`);
  // As after an outage: the rows expired and another process's take deleted them.
  await knex('event_stream_leases').where({ merchant_id: merchantId }).delete();
  await Promise.all([leases.renew(), leases.renew()]);
  t.same(lost, [], 'no stream taken for lost');
  t.equal(await live(merchantId), 3, 'three slots, no more');
  await leases.renew();
  t.equal(await live(merchantId), 3, 'and renewed again');
});
