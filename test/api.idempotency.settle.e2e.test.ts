// An idempotent create commits its key's completion beside the read models' catch-up, not after it
// (api/server.ts; bench issue 8: the two commits in a row were a sixth of a create's time), and
// still answers only once both have: a read after the answer sees what it created. A replay, whose
// key may have completed before the read models took the write in (a crash can fall between),
// answers only once they include everything committed.
import t from 'tap';
import { startTestApp, type MerchantCreds } from './helpers/app.ts';
import { until } from './helpers/money.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

const person = (first: string) => ({ first_name: first, last_name: 'Diop', phone: '+221771234567' });
const keyState = async (m: MerchantCreds, key: string) =>
  ((await s.knex('idempotency_keys').where({ merchant_id: m.merchantId, key }).first('state')) as { state: string } | undefined)?.state;

/**
 * From now on (until the test ends), whether a read-model wait is under way: with the projector
 * stopped, a request holding its answer for the read models is one (what the tests wait on, rather
 * than a pause long enough for a wrong answer to come).
 */
function readModelWaits(t: { teardown(fn: () => void): void }): () => boolean {
  const projector = s.projector;
  const waitFor = projector.waitFor.bind(projector);
  let pending = 0;
  projector.waitFor = (position, timeoutMs) => {
    pending++;
    const w = waitFor(position, timeoutMs);
    void w.finally(() => pending--);
    return w;
  };
  t.teardown(() => { projector.waitFor = waitFor; });
  return () => pending > 0;
}

/** Starts `work` with the projector stopped, runs `whileStopped`, then starts the projector again. */
async function withProjectorStopped<T>(work: () => Promise<T>, whileStopped: () => Promise<void>): Promise<T> {
  await s.awaitReadModels(await s.store.head());
  await s.projector.stop();
  let restarted = false;
  const restart = async () => {
    if (!restarted) {
      restarted = true;
      await s.projector.start();
    }
  };
  try {
    const pending = work();
    await whileStopped();
    await restart();
    return await pending;
  } finally {
    await restart();
  }
}

t.test('the key completes while the read models are still behind; the answer waits for both', async (t) => {
  const m = await h.newMerchant('Side by side');
  const waiting = readModelWaits(t);
  let answered = false;
  const res = await withProjectorStopped(
    () => h.as(m, 'POST', '/customers', person('Awa'), { idem: 'side-1' }).then((r) => { answered = true; return r; }),
    async () => {
      await until('the key completed', async () => (await keyState(m, 'side-1')) === 'completed');
      await until('the answer held for the read models', waiting);
      t.notOk(answered, 'no answer while the read models do not include the customer');
      const rows = await s.knex('customers').where({ merchant_id: m.merchantId }).select('id');
      t.equal(rows.length, 0, 'not in the read models yet');
    },
  );
  t.equal(res.status, 201);
  const read = await h.as(m, 'GET', `/customers/${res.body.id}`);
  t.equal(read.status, 200, 'a read right after the answer finds it');
});

t.test('a replay answers only once the read models include what was committed', async (t) => {
  const m = await h.newMerchant('Replay waits');
  const waiting = readModelWaits(t);
  const first = await h.as(m, 'POST', '/customers', person('Binta'), { idem: 'replay-w' });
  t.equal(first.status, 201);
  let replayed = false;
  const again = await withProjectorStopped(
    async () => {
      // Something else committed after the first answer, not yet in the read models: the replay
      // cannot tell what its own write was, so it waits for everything committed so far.
      await s.store.append([{ streamId: `test-replay-${m.merchantId}`, expectedVersion: 0, events: [{ type: 'test.noted', data: {} }] }]);
      return h.as(m, 'POST', '/customers', person('Binta'), { idem: 'replay-w' }).then((r) => { replayed = true; return r; });
    },
    async () => {
      await until('the replay held for the read models', waiting);
      t.notOk(replayed, 'no replay while the read models are behind');
    },
  );
  t.equal(again.status, 201);
  t.equal(again.body._meta.idempotency_replayed, true);
  t.equal(again.body.id, first.body.id);
});
