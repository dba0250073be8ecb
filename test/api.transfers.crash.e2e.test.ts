// The transfer saga survives a crash at any step (issue 4, "Must work" 3): the process is stopped at a
// chosen point, deterministically, by making one step fail the way a dying process would leave it
// (the step's effect never happens, its trigger is never acknowledged), then the service starts
// again on the same database. The transfer must finish with exactly one collection at the provider
// (the sandbox's own books) and exactly one successful disbursement, and the wallets moved once.
//
// Crash points:
//   1. a transfer created by an earlier version (transfer.created alone: the collection starts in the
//      create's own append since issue 44): the saga took it but died before recording the start;
//   2. the collection started but the gateway died before calling the provider (OTP payer: the
//      sealed OTP must survive the restart);
//   3. the collection completed at the provider but the process died before recording it;
//   4. the collection was recorded (disbursing) but the gateway died before calling the provider
//      for the disbursement;
//   5. the provider accepted the disbursement but the process died before recording its submission.
import t, { type Test } from 'tap';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  createTransfer, getTransfer, recipientSN, sandboxLegs, settledTransfer, transferMerchant, waitFor, walletsOf,
  type TransferMerchant,
} from './helpers/transfers.ts';
import { providers } from '../infra/providers/index.ts';
import type { InitiateLeg } from '../infra/providers/types.ts';
import type { StreamAppend } from '../infra/eventstore/types.ts';

// A message the stopped process had taken (or that NATS handed to its lingering pull request) comes
// back after the ack wait: kept short so the restart picks it up within the test's wait.
const env = { SANDBOX_SETTLE_MS: '50', BUS_ACK_WAIT_MS: '2000' };

/** A promise with its resolver: the crash point was reached. */
function signal(): { reached: Promise<void>; hit: () => void } {
  let hit!: () => void;
  const reached = new Promise<void>((r) => (hit = r));
  return { reached, hit };
}

/**
 * Makes the sandbox provider's `initiate` die for one kind of leg: before the provider is called
 * (`before`), or after the provider accepted the leg but before the gateway could record it (`after`).
 */
function crashInitiate(h: TestApp, kind: InitiateLeg['kind'], when: 'before' | 'after') {
  const sandbox = providers(h.app.services).sandbox;
  const real = sandbox.initiate.bind(sandbox);
  const s = signal();
  let calls = 0;
  sandbox.initiate = async (leg: InitiateLeg) => {
    if (leg.kind !== kind) return real(leg);
    calls++;
    if (when === 'after') await real(leg);
    s.hit();
    throw new Error(`simulated crash ${when} the provider call`);
  };
  return { ...s, calls: () => calls };
}

/** Makes every append that carries an event of `type` die (the process stops before it is stored). */
function crashAppend(h: TestApp, type: string) {
  const store = h.app.services.store;
  const real = store.append.bind(store);
  const s = signal();
  store.append = async (appends: StreamAppend[]) => {
    if (appends.some((a) => a.events.some((e) => e.type === type))) {
      s.hit();
      throw new Error(`simulated crash before ${type} was stored`);
    }
    return real(appends);
  };
  return s;
}

/**
 * Makes the app create transfers as the version before issue 44 did (transfer.created appended
 * alone, the saga to start the collection), and the saga's start of a collection die before it is
 * stored.
 */
function legacyCreateThenCrashSaga(h: TestApp) {
  const store = h.app.services.store;
  const real = store.append.bind(store);
  const s = signal();
  const carries = (appends: StreamAppend[], type: string) => appends.some((a) => a.events.some((e) => e.type === type));
  store.append = async (appends: StreamAppend[]) => {
    if (carries(appends, 'transfer.created')) {
      return real(appends.map((a) => ({ ...a, events: a.events.filter((e) => e.type !== 'transfer.collection_started') })));
    }
    if (carries(appends, 'transfer.collection_started')) {
      s.hit();
      throw new Error('simulated crash before transfer.collection_started was stored');
    }
    return real(appends);
  };
  return s;
}

// One database for the whole file (a fresh app start is the slow part); each test crashes the
// running app and starts the next one on the same database. Merchants keep the tests apart.
const base = await startTestApp({ env });
let running: TestApp = base;
t.teardown(async () => {
  if (running !== base) await running.stop();
  await base.stop();
});

/** The app the next test crashes. */
const current = () => running;

/** Stops the running app (its database stays) and starts the service again on it. */
async function restart(): Promise<TestApp> {
  await running.app.stop();
  const next = await startTestApp({ env, shareWith: base });
  if (running !== base) await running.stop();
  running = next;
  return next;
}

/** After the restart: completed, one collection, one successful disbursement, money moved once. */
async function checkFinishedOnce(t: Test, h: TestApp, m: TransferMerchant, id: string, expect: { xaf?: string; xof: string }) {
  const done = await settledTransfer(h, m, id);
  t.match(done, { status: 'completed', payin_status: 'completed', payout_status: 'completed' }, 'the transfer finished after the restart');
  t.same(done.history.map((x: any) => x.status), ['pending', 'collecting', 'disbursing', 'completed'], 'each status once');
  const legs = await sandboxLegs(h, id);
  const collections = legs.filter((l) => l.kind === 'collection');
  const disbursements = legs.filter((l) => l.kind === 'disbursement');
  t.equal(collections.length, 1, 'exactly one collection at the provider');
  t.equal(collections[0]?.reference, `transfer:${id}:collection`);
  t.equal(disbursements.length, 1, 'one disbursement at the provider');
  t.equal(disbursements.filter((l) => l.state === 'completed').length, 1, 'exactly one successful disbursement');
  t.equal(done.execution.collection.provider_reference, collections[0]?.provider_reference, "the collection's provider reference is the provider's");
  t.equal(done.execution.disbursements.length, 1, 'one disbursement attempt');
  t.equal(done.execution.disbursements[0].provider_reference, disbursements[0]?.provider_reference, "the disbursement's provider reference is the provider's");
  const gatewayLegs = await h.app.services.knex('provider_legs').where('reference', 'like', `transfer:${id}:%`).select('kind');
  t.same(gatewayLegs.map((l: any) => l.kind).sort(), ['collection', 'disbursement'], 'the gateway started each leg once');
  const w = await walletsOf(h, m);
  if (expect.xaf) t.match(w.XAF, { available: expect.xaf, reserved: '0' }, 'collection credited once');
  t.match(w.XOF, { available: expect.xof, reserved: '0' }, 'reservation debited once');
  return done;
}

t.test('an earlier version\'s transfer, crash in the saga before the collection started: the restart starts it once', async (t) => {
  const first = current();
  const m = await transferMerchant(first);
  const crash = legacyCreateThenCrashSaga(first);
  const created = await createTransfer(first, m);
  await crash.reached;
  const before = (await getTransfer(first, m, created.id)).body;
  t.match(before, { status: 'pending', payin_status: 'not_started', payout_status: 'not_started' }, 'stopped before the collection started');
  t.same(await sandboxLegs(first, created.id), [], 'nothing at the provider');

  const second = await restart();
  await checkFinishedOnce(t, second, m, created.id, { xaf: '9800', xof: '90200' });
});

t.test('crash in the gateway before the collection reached the provider (OTP payer): the sealed OTP survives', async (t) => {
  const first = current();
  const m = await transferMerchant(first);
  const crash = crashInitiate(first, 'collection', 'before');
  const created = await createTransfer(first, m, {
    payer: { country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_ORANGE_MOMO', phone: '+221770000005' },
    quoteBody: { payer_operator_code: 'SN_ORANGE_MOMO', payin_currency: 'XOF' },
    extra: { otp: '482913' },
  });
  await crash.reached;
  const before = await waitFor('collecting', async () => {
    const b = (await getTransfer(first, m, created.id)).body;
    return b.status === 'collecting' && b;
  });
  t.match(before, { payin_status: 'pending', payout_status: 'not_started' });
  t.equal(before.execution.collection.provider_reference, null, 'not submitted');
  t.same(await sandboxLegs(first, created.id), [], 'nothing at the provider');

  const second = await restart();
  // Same currency on both legs: held 9800, credited 9800, posted 9800.
  await checkFinishedOnce(t, second, m, created.id, { xof: '100000' });
  const vault = await second.app.services.knex('otp_vault').where({ reference: `transfer:${created.id}:collection` });
  t.same(vault, [], 'the OTP is discarded once the provider has it');
});

t.test('crash after the collection completed at the provider, before it was recorded: the re-check settles it', async (t) => {
  const first = current();
  const m = await transferMerchant(first);
  const crash = crashAppend(first, 'transfer.payin.completed');
  const created = await createTransfer(first, m);
  await crash.reached;
  const legs = await sandboxLegs(first, created.id);
  t.match(legs, [{ kind: 'collection', state: 'completed' }], 'the provider collected');
  t.equal(legs.length, 1);
  t.match((await getTransfer(first, m, created.id)).body, { status: 'collecting', payin_status: 'pending' }, 'not recorded');
  t.match((await walletsOf(first, m)).XAF ?? { available: '0' }, { available: '0' }, 'nothing credited yet');

  const second = await restart();
  await checkFinishedOnce(t, second, m, created.id, { xaf: '9800', xof: '90200' });
});

t.test('crash between the legs, before the disbursement reached the provider: disbursed once, never collected again', async (t) => {
  const first = current();
  const m = await transferMerchant(first);
  const crash = crashInitiate(first, 'disbursement', 'before');
  const created = await createTransfer(first, m);
  await crash.reached;
  const between = await waitFor('disbursing', async () => {
    const b = (await getTransfer(first, m, created.id)).body;
    return b.status === 'disbursing' && b;
  });
  t.match(between, { payin_status: 'completed', payout_status: 'pending' }, 'stopped between the legs');
  t.equal(between.execution.disbursements[0].provider_reference, null, 'the disbursement was not submitted');
  t.match(await sandboxLegs(first, created.id), [{ kind: 'collection', state: 'completed' }]);
  t.equal((await sandboxLegs(first, created.id)).length, 1, 'only the collection at the provider');
  t.equal((await walletsOf(first, m)).XAF?.available, '9800', 'the collection was credited before the stop');

  const second = await restart();
  await checkFinishedOnce(t, second, m, created.id, { xaf: '9800', xof: '90200' });
});

t.test('crash after the provider accepted the disbursement, before it was recorded: the same leg is found again', async (t) => {
  const first = current();
  const m = await transferMerchant(first);
  const crash = crashInitiate(first, 'disbursement', 'after');
  const created = await createTransfer(first, m, { recipient: recipientSN('+221770000007') });
  await crash.reached;
  const accepted = await sandboxLegs(first, created.id);
  t.equal(accepted.filter((l) => l.kind === 'disbursement').length, 1, 'the provider has the disbursement');
  const between = await waitFor('disbursing', async () => {
    const b = (await getTransfer(first, m, created.id)).body;
    return b.status === 'disbursing' && b;
  });
  t.equal(between.execution.disbursements[0].provider_reference, null, 'its submission was not recorded');

  const second = await restart();
  const done = await checkFinishedOnce(t, second, m, created.id, { xaf: '9800', xof: '90200' });
  t.equal(done.execution.disbursements[0].provider_reference, accepted.find((l) => l.kind === 'disbursement')!.provider_reference,
    'the leg the provider accepted before the crash, not a new one');
});
