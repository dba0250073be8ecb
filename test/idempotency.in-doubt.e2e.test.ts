// Issue 28, on every backend: an append whose commit is in doubt (PostgreSQL committed it, then the
// connection dropped before the answer arrived) is answered 503 and stores nothing, but the key keeps
// its resource id: the retry with the same key finds what committed and answers it as a replay (201,
// the same resource), never a second resource nor a stored refusal (`quote_not_active`). A sealed OTP
// survives the doubt and reaches the provider; an attempt that certainly committed nothing deletes
// only its own sealed OTP. A transfer's OTP goes to the provider whenever one was sent, as a payin's.
import t from 'tap';
import type { Services } from '../commands/services.ts';
import type { StreamAppend } from '../infra/eventstore/types.ts';
import { WrongExpectedVersion } from '../infra/eventstore/types.ts';
import { startTestApp, type MerchantCreds } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, topUp, until, wallet } from './helpers/money.ts';
import { createTransfer, payerCM, recipientSN, settledTransfer, transferMerchant, transferQuote } from './helpers/transfers.ts';
import { dbLabel } from './helpers/db.ts';

t.comment(`on ${dbLabel}`);
const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

const types = (appends: StreamAppend[]) => appends.flatMap((a) => a.events.map((e) => e.type));

/**
 * The next append holding an event of `type` commits, then fails as a dropped connection does
 * (`times` such appends). Other appends (the workers') go through untouched.
 */
function commitThenDrop(services: Services, type: string, times = 1): () => void {
  const store = services.store;
  const original = store.append;
  let left = times;
  store.append = async (appends, opts) => {
    const result = await original.call(store, appends, opts);
    if (left > 0 && types(appends).includes(type)) {
      left -= 1;
      throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    }
    return result;
  };
  return () => { store.append = original; };
}

/** The next `times` appends holding an event of `type` lose their race without committing. */
function loseRaces(services: Services, type: string, times: number): () => void {
  const store = services.store;
  const original = store.append;
  let left = times;
  store.append = async (appends, opts) => {
    if (left > 0 && types(appends).includes(type)) {
      left -= 1;
      throw new WrongExpectedVersion(appends[0]!.streamId, 0, 1);
    }
    return original.call(store, appends, opts);
  };
  return () => { store.append = original; };
}

const claimOf = (m: MerchantCreds, key: string) => s.knex('idempotency_keys').where({ merchant_id: m.merchantId, key }).first();
const vaultRows = (reference: string) => s.knex('otp_vault').where({ reference }).count<Array<{ n: string | number }>>('* as n').then((r) => Number(r[0]!.n));
const count = async (table: string, m: MerchantCreds) => Number((await s.knex(table).where({ merchant_id: m.merchantId }).count<Array<{ n: string | number }>>('* as n'))[0]!.n);

t.test('a payin whose commit is in doubt: 503, then the retry answers that payin (replayed) and its OTP reaches the provider', async (t) => {
  const m = await h.newMerchant('InDoubtPayin');
  const customer = await newCustomer(h, m, 'SN', '+221770000001');
  const q = await quote(h, m, 'payin', leg('SN_ORANGE_MOMO', 'SN', 'XOF', '5000'));
  const body = { quote_id: q.id, customer_id: customer, source: party('SN', 'SN_ORANGE_MOMO', '+221770000001'), otp: '482913' };
  const restore = commitThenDrop(s, 'payin.created');
  t.teardown(restore);
  const first = await h.as(m, 'POST', '/payins', body, { idem: 'in-doubt-payin' });
  restore();
  t.equal(first.status, 503, 'the commit is in doubt: 503, retry the same request');
  t.equal(first.body.error.code, 'service_unavailable');
  const claim = await claimOf(m, 'in-doubt-payin');
  t.match(claim, { state: 'in_progress', claim_token: null }, 'nothing stored; the claim given up, its resource id kept');

  const retry = await h.as(m, 'POST', '/payins', body, { idem: 'in-doubt-payin' });
  t.equal(retry.status, 201, 'the retry answers what committed');
  t.equal(retry.body.id, claim.resource_id, 'the payin the first attempt committed');
  t.same(retry.body._meta, { idempotency_key: 'in-doubt-payin', idempotency_replayed: true }, 'as a replay');
  const again = await h.as(m, 'POST', '/payins', body, { idem: 'in-doubt-payin' });
  t.equal(again.body.id, retry.body.id, 'and it is stored from then on');
  t.equal(again.body._meta.idempotency_replayed, true);

  t.equal(await count('payins', m), 1, 'one payin');
  const done = await settled(h, m, 'payins', retry.body.id);
  t.equal(done.status, 'completed', 'collected with its OTP (without it the provider fails it OTP_REQUIRED)');
  t.equal(await vaultRows(retry.body.id), 0, 'the OTP is gone once the provider has it');
});

t.test('a payout whose commit is in doubt: the retry answers that payout; one hold', async (t) => {
  const m = await h.newMerchant('InDoubtPayout');
  await topUp(h, m, 'XOF', '20000');
  const customer = await newCustomer(h, m, 'SN', '+221770000001');
  const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000'));
  const body = { quote_id: q.id, customer_id: customer, payment_reason_text: 'in doubt', recipient: recipientSN('+221770000098') };
  const restore = commitThenDrop(s, 'payout.created');
  t.teardown(restore);
  const first = await h.as(m, 'POST', '/payouts', body, { idem: 'in-doubt-payout' });
  restore();
  t.equal(first.status, 503);
  const retry = await h.as(m, 'POST', '/payouts', body, { idem: 'in-doubt-payout' });
  t.equal(retry.status, 201, `not quote_not_active (${retry.text.slice(0, 120)})`);
  t.equal(retry.body._meta.idempotency_replayed, true);
  t.equal(retry.body.id, (await claimOf(m, 'in-doubt-payout')).resource_id);
  t.equal(await count('payouts', m), 1, 'one payout');
  t.match(await wallet(h, m, 'XOF'), { available: '15000', reserved: '5000' }, 'held once');
});

t.test('a relaunch whose commit is in doubt: the retry answers that relaunch, not relaunch_not_allowed', async (t) => {
  const m = await transferMerchant(h);
  const tr = await createTransfer(h, m, { recipient: recipientSN('+221770000099') });
  await settledTransfer(h, m, tr.id, 'failed');
  const path = `/transfers/${tr.id}/relaunch-payout`;
  const body = { recipient: recipientSN('+221770000002') };
  const restore = commitThenDrop(s, 'transfer.payout.started');
  t.teardown(restore);
  const first = await h.as(m, 'POST', path, body, { idem: 'in-doubt-relaunch' });
  restore();
  t.equal(first.status, 503);
  const retry = await h.as(m, 'POST', path, body, { idem: 'in-doubt-relaunch' });
  t.equal(retry.status, 200, `the relaunch that committed (${retry.text.slice(0, 120)})`);
  t.equal(retry.body._meta.idempotency_replayed, true);
  t.equal(retry.body.execution.disbursements.length, 2, 'one relaunch');
  const done = await settledTransfer(h, m, tr.id, 'completed');
  t.equal(done.execution.disbursements.length, 2, 'completed on attempt 2, no third');
});

t.test('a transfer whose commit is in doubt: its OTP survives and reaches the provider', async (t) => {
  const m = await transferMerchant(h, { corridors: ['SN-SN-XOF-XOF'] });
  const q = await transferQuote(h, m, { payer_operator_code: 'SN_ORANGE_MOMO', payin_currency: 'XOF' });
  const body = { quote_id: q.id, customer_id: m.customerId, payer: party('SN', 'SN_ORANGE_MOMO', '+221770000005'), recipient: recipientSN(), otp: '482913' };
  const restore = commitThenDrop(s, 'transfer.created');
  t.teardown(restore);
  const first = await h.as(m, 'POST', '/transfers', body, { idem: 'in-doubt-transfer' });
  restore();
  t.equal(first.status, 503);
  const retry = await h.as(m, 'POST', '/transfers', body, { idem: 'in-doubt-transfer' });
  t.equal(retry.status, 201);
  t.equal(retry.body._meta.idempotency_replayed, true);
  const done = await settledTransfer(h, m, retry.body.id);
  t.equal(done.status, 'completed', `collected with its OTP (${JSON.stringify(done.execution?.collection)})`);
  t.equal(await vaultRows(`transfer:${retry.body.id}:collection`), 0, 'the OTP is gone once the provider has it');
});

t.test('an attempt that certainly committed nothing deletes its sealed OTP; the retry seals and delivers its own', async (t) => {
  const m = await h.newMerchant('LostRaces');
  const customer = await newCustomer(h, m, 'SN', '+221770000001');
  const q = await quote(h, m, 'payin', leg('SN_ORANGE_MOMO', 'SN', 'XOF', '5000'));
  const body = { quote_id: q.id, customer_id: customer, source: party('SN', 'SN_ORANGE_MOMO', '+221770000001'), otp: '482913' };
  // Every attempt of the request loses its race (the command layer's bounded retries): a 5xx.
  const restore = loseRaces(s, 'payin.created', 30);
  t.teardown(restore);
  const first = await h.as(m, 'POST', '/payins', body, { idem: 'lost-races' });
  restore();
  t.equal(first.status, 500);
  const claim = await claimOf(m, 'lost-races');
  t.equal(await vaultRows(claim.resource_id), 0, 'nothing committed: its sealed OTP is gone');
  const retry = await h.as(m, 'POST', '/payins', body, { idem: 'lost-races' });
  t.equal(retry.status, 201);
  t.equal(retry.body.id, claim.resource_id, 'the same resource id');
  t.equal(retry.body._meta.idempotency_replayed, false, 'it ran, this time');
  t.equal((await settled(h, m, 'payins', retry.body.id)).status, 'completed', 'with its OTP');
  t.equal(await vaultRows(retry.body.id), 0);
});

t.test('a transfer sends the OTP it was given even where the operator needs none: 000000 fails its collection as a payin\'s', async (t) => {
  const m = await transferMerchant(h);
  const customer = await newCustomer(h, m, 'CM', '+237670000001');
  const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const payin = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: payerCM(), otp: '000000' }, { idem: true });
  t.equal(payin.status, 201);
  const failedPayin = await settled(h, m, 'payins', payin.body.id);
  t.equal(failedPayin.status, 'failed', 'the payin with 000000 fails (CONTRACT §3)');
  t.match(failedPayin, { failure_reason: 'payer_declined', provider_failure: { code: 'INVALID_OTP' } }, 'for its OTP');

  const tq = await transferQuote(h, m);
  const tr = await h.as(m, 'POST', '/transfers', { quote_id: tq.id, customer_id: m.customerId, payer: payerCM(), recipient: recipientSN(), otp: '000000' }, { idem: true });
  t.equal(tr.status, 201);
  const done = await settledTransfer(h, m, tr.body.id);
  t.match(done, { status: 'failed', payin_status: 'failed', payout_status: 'not_started' }, 'the transfer with 000000 fails its collection the same way');
  t.same(done.execution.collection.provider_failure, failedPayin.provider_failure, 'for the same reason');
  t.equal(done.execution.collection.failure_reason, failedPayin.failure_reason);
  await until('the transfer\'s OTP is gone', async () => (await vaultRows(`transfer:${tr.body.id}:collection`)) === 0);
});
