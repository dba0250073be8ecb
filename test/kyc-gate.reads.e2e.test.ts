// The KYC gate of a transfer or payout create reads the merchant (its kyc_required_operators) as the
// decision's own read: from the cache, the append held to its version (issue 44: it was a read of
// the merchant's stream on every create, a round trip before the answer). A change to the merchant
// between the read and the append still counts: the create is decided again on it.
import t from 'tap';
import { caughtUp, startTestApp } from './helpers/app.ts';
import { createTransfer, settledTransfer, transferMerchant, transferQuote, payerCM, recipientSN } from './helpers/transfers.ts';
import { newCustomer, quote, settled, topUp, leg } from './helpers/money.ts';
import { streams } from '../commands/streams.ts';
import { toNew } from '../commands/aggregates.ts';
import type { MerchantState } from '../domain/merchant.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

/** Statements that read `streamId`'s events (alone, or among others in one statement). */
function readsOf(streamId: string): { count: () => number; stop: () => void } {
  let n = 0;
  const onQuery = (q: { sql: string; bindings?: unknown[] }) => {
    if (/FROM events/.test(q.sql) && JSON.stringify(q.bindings ?? []).includes(`"${streamId}"`)) n++;
  };
  s.knex.on('query', onQuery);
  return { count: () => n, stop: () => { s.knex.off('query', onQuery); } };
}

t.test('a transfer create with the merchant cached does not read its stream', async (t) => {
  const m = await transferMerchant(h);
  const first = await createTransfer(h, m); // the merchant is in the cache from here
  // Its legs and webhooks all done: no worker reads the merchant while the next create is counted.
  await settledTransfer(h, m, first.id);
  const q = await transferQuote(h, m);
  await caughtUp(h);
  const reads = readsOf(streams.merchant(m.merchantId));
  t.teardown(reads.stop);
  const r = await h.as(m, 'POST', '/transfers', { quote_id: q.id, customer_id: m.customerId, payer: payerCM(), recipient: recipientSN() }, { idem: true });
  t.equal(r.status, 201);
  t.equal(reads.count(), 0, 'no read of the merchant stream');
});

t.test('a payout create with the merchant cached does not read its stream', async (t) => {
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m, 'SN', '+221770000001');
  await topUp(h, m, 'XOF', '100000');
  const body = (quoteId: string) => ({
    quote_id: quoteId, customer_id: customer, payment_reason_text: 'Invoice 7',
    recipient: { country_code: 'SN', rail_type: 'mobile_money', operator_code: 'SN_WAVE_MOMO', phone: '+221770000001', recipient_type: 'individual', first_name: 'Awa', last_name: 'Ndiaye' },
  });
  const first = await h.as(m, 'POST', '/payouts', body((await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '1000'))).id), { idem: true });
  t.equal(first.status, 201);
  await settled(h, m, 'payouts', first.body.id);
  const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '1000'));
  await caughtUp(h);
  const reads = readsOf(streams.merchant(m.merchantId));
  t.teardown(reads.stop);
  const r = await h.as(m, 'POST', '/payouts', body(q.id), { idem: true });
  t.equal(r.status, 201);
  t.equal(reads.count(), 0, 'no read of the merchant stream');
});

t.test('the merchant\'s KYC list changed behind the cache (by another process): the create is decided on the new list', async (t) => {
  const m = await transferMerchant(h);
  await createTransfer(h, m);
  const q = await transferQuote(h, m);
  // Another process's change: appended straight to the store, so this process's cached merchant lags it.
  const merchantStream = streams.merchant(m.merchantId);
  const cached = s.aggregates.cachedAtLeast<MerchantState>(merchantStream, 1);
  t.ok(cached, 'the merchant is cached');
  const routing = { ...cached!.state.routing, kyc_required_operators: ['SN_WAVE_MOMO'] };
  await s.store.append([{ streamId: merchantStream, expectedVersion: cached!.version, events: toNew([{ type: 'merchant.routing_set', data: { routing, at: new Date().toISOString() } }], {}) }]);
  t.equal(s.aggregates.cachedAtLeast<MerchantState>(merchantStream, 1)!.version, cached!.version, 'the cache still holds the version before');
  const r = await h.as(m, 'POST', '/transfers', { quote_id: q.id, customer_id: m.customerId, payer: payerCM(), recipient: recipientSN() }, { idem: true });
  t.equal(r.status, 400, 'refused: the customer is not verified and the operator now requires it');
  t.equal(r.body.error?.code, 'kyc_required');
});
