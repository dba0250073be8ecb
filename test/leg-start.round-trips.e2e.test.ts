// A leg's start (commands/leg-initiation.ts) records the provider's answer in two writes, the leg
// row's provider reference and the owner's submission event, both only after the provider answered
// and neither waiting for the other: the start's last round trips (issue 44, a transfer's latency).
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, until } from './helpers/money.ts';
import { streams } from '../commands/streams.ts';

const h = await startTestApp({ env: { SANDBOX_SETTLE_MS: '3000' } });
t.teardown(() => h.stop());
const knex = h.app.services.knex;
/** An advisory lock the test holds: every write of a provider reference waits for it. */
const HOLD = 4_410_044;
/** The leg row's provider reference (null until written). */
const referenceOf = async (id: string): Promise<string | null> =>
  (await knex('provider_legs').where({ reference: id }).first('provider_reference')).provider_reference;

t.test('the submission is recorded while the provider reference\'s write is held up, and both land', async (t) => {
  await knex.raw(`CREATE FUNCTION test_hold_reference() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.provider_reference IS DISTINCT FROM OLD.provider_reference THEN PERFORM pg_advisory_xact_lock_shared(${HOLD}); END IF;
      RETURN NEW;
    END $$`);
  await knex.raw('CREATE TRIGGER test_hold_reference BEFORE UPDATE ON provider_legs FOR EACH ROW EXECUTE FUNCTION test_hold_reference()');
  const holder = await knex.transaction();
  await holder.raw('SELECT pg_advisory_xact_lock(?)', [HOLD]);
  let held = true;
  const release = async () => {
    if (held) await holder.commit();
    held = false;
  };
  t.teardown(async () => {
    await release();
    await knex.raw('DROP TRIGGER IF EXISTS test_hold_reference ON provider_legs');
    await knex.raw('DROP FUNCTION IF EXISTS test_hold_reference()');
  });
  const m = await h.newMerchant();
  const payer = await newCustomer(h, m);
  const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: payer, source: party('CM', 'CM_MTN_MOMO', '+237670000001') }, { idem: true });
  t.equal(p.status, 201);
  const id = p.body.id as string;
  // Before the change the submission waited for the reference's write, which waits for the lock: it never came.
  const submitted = await until('the payin submitted', async () => {
    const events = await h.app.services.store.readStream(streams.payin(id));
    return events.find((e) => e.type === 'payin.submitted');
  });
  t.equal(await referenceOf(id), null, 'submitted while the reference\'s write waits: it did not wait for it');
  const reference = (submitted.data as { provider_reference: string }).provider_reference;
  t.match(reference, /^SBX-/, 'the submission carries the provider\'s reference');
  await release();
  await until('the reference written', () => referenceOf(id));
  t.equal(await referenceOf(id), reference, 'the row has the same reference');
  t.equal((await settled(h, m, 'payins', id)).status, 'completed', 'and the payin settles as ever');
});
