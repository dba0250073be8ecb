// A leg started again (CONTRACT §15: exactly once at the provider). The bus delivers at least once
// and a start that dies after its provider call is started again by its redelivered trigger, under
// the same reference: the provider may have the leg from the earlier start. A refusal of the new
// request (the provider unreachable for a moment, its payee check) then proves nothing about the
// leg: its status decides, and the leg never goes to another provider or fails while the first
// may have it. Two starts of one leg at a provider that can refuse it take turns (a hold), so one
// never reads the other's request as not there yet, and never moves the leg back to a provider that
// refused it; a start that never asked a provider leaves no mark that it did. (Found by two reviews:
// each test but the never-seen one failed before commands/leg-initiation.ts checked a refusal against
// the status and held every start that can be refused.)
import t from 'tap';
import type { Test } from 'tap';
import { startTestApp } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, topUp, until, wallet } from './helpers/money.ts';
import { PROVIDER_STARTS_IN_FLIGHT, ProviderBusy } from '../commands/leg-initiation.ts';
import { setRouting, simulatedProviders } from './helpers/providers.ts';
import { startLeg, StartHeldElsewhere } from '../commands/leg-initiation.ts';
import type { LegRequest } from '../commands/legs.ts';

const { mtn, pawapay, env, close } = await simulatedProviders({ n: 4, timeoutMs: 3_000, pawapay: { autoSettle: false } });
const h = await startTestApp({ env });
t.teardown(async () => {
  await h.stop();
  await close();
});
const s = h.app.services;
const m = await h.newMerchant('Legs started again');
const customer = await newCustomer(h, m, 'CM', '+237670000001');
await topUp(h, m, 'XAF', '100000');

const legRow = async (reference: string) =>
  (await s.knex('provider_legs').where({ reference }).first('provider', 'provider_reference')) as { provider: string; provider_reference: string | null } | undefined;
const deposits = (id: string) => pawapay.initiations('deposits').filter((d) => d.depositId === id);

/** The leg's trigger delivered again, as the gateway handles it: a start held elsewhere is tried again a moment later. */
async function startAgain(l: LegRequest): Promise<void> {
  for (;;) {
    try {
      return await startLeg(s, l, { actor: 'provider-gateway', causationId: 'redelivered', correlationId: l.reference });
    } catch (err) {
      if (!(err instanceof StartHeldElsewhere)) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function payin(phone: string): Promise<{ id: string; leg: LegRequest }> {
  const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', phone) }, { idem: true });
  if (p.status !== 201) throw new Error(`payin: ${p.status} ${p.text}`);
  const id = p.body.id as string;
  return { id, leg: { owner: 'payin', reference: id, kind: 'collection', operatorCode: 'CM_MTN_MOMO', phone, amount: 5000n, currency: 'XAF', otp: false, paymentId: id } };
}

async function payout(phone: string): Promise<{ id: string; leg: LegRequest }> {
  const q = await quote(h, m, 'payout', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const recipient = { ...party('CM', 'CM_MTN_MOMO', phone), recipient_type: 'individual', first_name: 'Awa', last_name: 'Ndiaye' };
  const p = await h.as(m, 'POST', '/payouts', { quote_id: q.id, customer_id: customer, payment_reason_text: 'salary', recipient }, { idem: true });
  if (p.status !== 201) throw new Error(`payout: ${p.status} ${p.text}`);
  const id = p.body.id as string;
  return { id, leg: { owner: 'payout', reference: id, kind: 'disbursement', operatorCode: 'CM_MTN_MOMO', phone, amount: BigInt(p.body.receive_amount), currency: 'XAF', otp: false, paymentId: id } };
}

/** MTN settles the leg it holds; the scheduled status checks bring the outcome in. */
async function mtnSettles(id: string, kind: 'payins' | 'payouts') {
  mtn.legs.get(id)!.planned = { status: 'SUCCESSFUL' };
  mtn.settle(id);
  return settled(h, m, kind, id);
}

/** Once MTN took the leg (we recorded its reference), the leg's trigger comes again while MTN refuses connections. */
async function startAgainWithMtnDown(p: { id: string; leg: LegRequest }): Promise<void> {
  await until('MTN took the leg', async () => (await legRow(p.id))?.provider_reference);
  await mtn.down();
  try {
    await startAgain(p.leg);
  } finally {
    await mtn.up();
  }
}

t.test('MTN took the payin; started again while MTN is unreachable: no failover, MTN\'s status settles it', async (t) => {
  await setRouting(h, 'CM_MTN_MOMO', ['mtn_momo', 'pawapay']);
  mtn.plan('237670000042', { status: 'PENDING' });
  const p = await payin('+237670000042');
  await startAgainWithMtnDown(p);
  t.equal(deposits(p.id).length, 0, 'pawaPay never asked for a leg MTN has');
  t.equal((await legRow(p.id))?.provider, 'mtn_momo', 'the leg stays with MTN');
  t.equal((await mtnSettles(p.id, 'payins')).status, 'completed');
});

t.test('MTN took the payout (one provider); started again while MTN is unreachable: it stays pending, paid once', async (t) => {
  await setRouting(h, 'CM_MTN_MOMO', ['mtn_momo']);
  mtn.plan('237670000043', { status: 'PENDING' });
  const before = await wallet(h, m, 'XAF');
  const p = await payout('+237670000043');
  await startAgainWithMtnDown(p);
  const after = await h.as(m, 'GET', `/payouts/${p.id}`);
  t.equal(after.body.status, 'pending', 'not failed while MTN may pay it');
  const done = await mtnSettles(p.id, 'payouts');
  t.equal(done.status, 'completed');
  t.match(await wallet(h, m, 'XAF'), { available: String(BigInt(before.available) - BigInt(done.send_amount)), reserved: before.reserved }, 'debited once, nothing held');
});

t.test('MTN took the payout; started again after the payee\'s account closed: MTN\'s transfer answers, not the payee check', async (t) => {
  await setRouting(h, 'CM_MTN_MOMO', ['mtn_momo']);
  mtn.plan('237670000044', { status: 'PENDING' });
  const p = await payout('+237670000044');
  await until('MTN took the transfer', async () => (await legRow(p.id))?.provider_reference);
  mtn.accountHolder('237670000044', false);
  await startAgain(p.leg);
  t.equal((await h.as(m, 'GET', `/payouts/${p.id}`)).body.status, 'pending', 'not failed PAYEE_NOT_FOUND while MTN has the transfer');
  t.equal((await mtnSettles(p.id, 'payouts')).status, 'completed');
});

t.test('a leg MTN never saw, refused when asked again: its status says so, and the failover goes on', async (t) => {
  await setRouting(h, 'CM_MTN_MOMO', ['mtn_momo', 'pawapay']);
  // The first request-to-pay times out unrecorded (in doubt); MTN's status finds nothing, so it is
  // asked again, and refuses: a leg MTN certainly does not have goes to pawaPay.
  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', hang: true, record: false });
  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', status: 400, body: { code: 'NOT_ALLOWED', message: 'not allowed' }, record: false });
  const p = await payin('+237670000045');
  await until('pawaPay has the deposit', async () => deposits(p.id).length === 1);
  pawapay.settle('deposits', p.id);
  t.equal((await settled(h, m, 'payins', p.id)).status, 'completed');
  t.equal((await legRow(p.id))?.provider, 'pawapay');
  t.notOk(mtn.legs.get(p.id), 'MTN never had it');
});

t.test('two starts racing through a failover: the leg never goes back to the provider that refused it', async (t) => {
  await setRouting(h, 'CM_MTN_MOMO', ['mtn_momo', 'pawapay']);
  // The race's window widened, as slow round trips would: the failover's move to pawaPay waits
  // 300 ms, and the second start's first write of its row (at MTN, from the routing it read before
  // the move) 1 s, so it lands after the move.
  const client = s.knex.client as unknown as { query: (conn: unknown, q: { sql: string; bindings: unknown[] }) => Promise<unknown> };
  const query = client.query.bind(client);
  let mtnWrites = 0;
  client.query = (conn, q) => {
    const sql = typeof q?.sql === 'string' ? q.sql : '';
    const writes = /(insert into|update) provider_legs/i.test(sql) && !/provider_reference|starting_until = '-infinity'/.test(sql);
    const bound = JSON.stringify(q?.bindings ?? []);
    const delay = !writes ? 0 : bound.includes('pawapay') ? 300 : bound.includes('mtn_momo') && mtnWrites++ > 0 ? 1000 : 0;
    return delay > 0 ? new Promise((r) => setTimeout(r, delay)).then(() => query(conn, q)) : query(conn, q);
  };
  t.teardown(() => { client.query = query; });
  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', status: 400, body: { code: 'NOT_ALLOWED', message: 'not allowed' }, record: false });
  const p = await payin('+237670000046');
  await startAgain(p.leg); // the same trigger, a second time at about the same moment
  await until('pawaPay has the deposit', async () => deposits(p.id).length > 0);
  // The gateway's own start, if it was the one told the leg was held, comes again within 500 ms.
  await new Promise((r) => setTimeout(r, 1_500));
  await until('no start holds the leg', async () => (await s.knex.raw('SELECT 1 FROM provider_legs WHERE reference = ? AND starting_until > now()', [p.id])).rows.length === 0);
  t.notOk(mtn.legs.get(p.id), 'MTN, which refused it, was never asked to take it again');
  t.equal((await legRow(p.id))?.provider, 'pawapay', 'the row names the provider that has the leg');
  pawapay.settle('deposits', p.id);
  t.equal((await settled(h, m, 'payins', p.id)).status, 'completed');
});

const RATE_LIMITED = { status: 429, body: { code: 'TOO_MANY_REQUESTS', message: 'rate limited' }, record: false };

/**
 * A payout whose first start is slow at MTN's payee check (it has sent nothing yet), and the next
 * request to transfer refused (429): the first start's own, or a duplicate start's if it raced ahead.
 */
async function payoutSlowAtPayeeCheck(phone: string): Promise<{ id: string; leg: LegRequest }> {
  mtn.plan(phone.slice(1), { status: 'PENDING' });
  mtn.fault({ method: 'GET', path: '/disbursement/v1_0/accountholder', hang: true });
  mtn.fault({ method: 'POST', path: '/disbursement/v1_0/transfer', ...RATE_LIMITED });
  const p = await payout(phone);
  await until('the first start is at its payee check', async () => mtn.hangingNow === 1);
  return p;
}

/** The payout and MTN agree: failed with no transfer at MTN, or a transfer at MTN and the payout not failed (then paid). */
async function agreesWithMtn(t: Test, id: string): Promise<void> {
  const final = await until('the payout settled or MTN has the transfer', async () => {
    const status = (await h.as(m, 'GET', `/payouts/${id}`)).body.status as string;
    return status === 'failed' || mtn.legs.get(id) ? status : undefined;
  });
  await new Promise((r) => setTimeout(r, 3_500)); // the other start's request, had it been sent, has arrived
  if (final === 'failed') t.notOk(mtn.legs.get(id), 'failed, and MTN has no transfer');
  else t.equal((await mtnSettles(id, 'payouts')).status, 'completed', 'MTN has the transfer: paid, once');
}

t.test('one provider, a duplicate start racing the first: it waits its turn; the payout and MTN agree', async (t) => {
  await setRouting(h, 'CM_MTN_MOMO', ['mtn_momo']);
  const p = await payoutSlowAtPayeeCheck('+237670000071');
  await startAgain(p.leg); // the same trigger delivered a second time, while the first start is in flight
  await agreesWithMtn(t, p.id);
});

t.test('a fallback added while a one-provider start is in flight: the leg never goes to a second provider', async (t) => {
  await setRouting(h, 'CM_MTN_MOMO', ['mtn_momo']);
  const p = await payoutSlowAtPayeeCheck('+237670000072');
  await setRouting(h, 'CM_MTN_MOMO', ['mtn_momo', 'pawapay']); // the operator adds a fallback
  await startAgain(p.leg);
  await agreesWithMtn(t, p.id);
  t.equal(pawapay.initiations('payouts').filter((x) => x.payoutId === p.id).length, 0, 'pawaPay never asked');
});

t.test('a start refused as busy leaves no mark: with MTN then down, its leg fails over like a fresh one', async (t) => {
  await setRouting(h, 'CM_MTN_MOMO', ['mtn_momo', 'pawapay']);
  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', hang: true, times: PROVIDER_STARTS_IN_FLIGHT });
  for (let i = 0; i < PROVIDER_STARTS_IN_FLIGHT; i++) await payin(`+2376700001${String(i).padStart(2, '0')}`);
  await until('every MTN start slot in flight', async () => mtn.hangingNow === PROVIDER_STARTS_IN_FLIGHT);
  const busy = await payin('+237670000173');
  await new Promise((r) => setTimeout(r, 1_200)); // refused as busy, tried again every 500 ms
  t.notOk(mtn.legs.get(busy.id), 'MTN never saw it');
  await mtn.down();
  try {
    await until('it failed over to pawaPay', async () => deposits(busy.id).length === 1);
    t.pass('pawaPay has it');
  } finally {
    await mtn.up();
  }
  pawapay.settle('deposits', busy.id);
  t.equal((await settled(h, m, 'payins', busy.id)).status, 'completed');
});

t.test('a leg already moved to pawaPay does not wait for MTN\'s start slots when it is started again', async (t) => {
  await setRouting(h, 'CM_MTN_MOMO', ['mtn_momo', 'pawapay']);
  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', status: 400, body: { code: 'NOT_ALLOWED', message: 'not allowed' }, record: false });
  const p = await payin('+237670000302');
  await until('pawaPay has the deposit', async () => deposits(p.id).length === 1);
  await until('no start holds it', async () => (await s.knex.raw('SELECT 1 FROM provider_legs WHERE reference = ? AND starting_until > now()', [p.id])).rows.length === 0);
  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', hang: true, times: PROVIDER_STARTS_IN_FLIGHT });
  for (let i = 0; i < PROVIDER_STARTS_IN_FLIGHT; i++) await payin(`+2376700003${String(i + 10).padStart(2, '0')}`);
  await until('every MTN start slot in flight', async () => mtn.hangingNow === PROVIDER_STARTS_IN_FLIGHT);
  const err = await startLeg(s, p.leg, { actor: 'provider-gateway', causationId: 'again', correlationId: p.id }).then(() => undefined, (e: unknown) => e);
  t.notOk(err instanceof ProviderBusy, `started again at pawaPay while MTN is busy (${String(err)})`);
  t.equal(deposits(p.id).length, 2, 'asked pawaPay again (a duplicate it ignores)');
  pawapay.settle('deposits', p.id);
  t.equal((await settled(h, m, 'payins', p.id)).status, 'completed');
  await until('MTN\'s hanging starts ended', async () => mtn.hangingNow === 0);
});
