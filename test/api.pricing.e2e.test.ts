// Operator pricing (CONTRACT.md §2) over HTTP: a percent above 100 is refused by the schema with a
// 400 naming the field and changes nothing; and a rule that got into the event store anyway (written
// before this check existed) makes quotes answer 400 bad_request, never 500.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { leg } from './helpers/money.ts';
import { toNew } from '../commands/aggregates.ts';
import { streams } from '../commands/streams.ts';
import type { MerchantEvent } from '../domain/merchant.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

const pricing = (merchantId: string, body: unknown) => h.admin('PUT', `/admin/merchants/${merchantId}/pricing`, body);
const fields = (r: { body: any }) => (r.body.error?.details ?? []).map((d: any) => d.field);

t.test('PUT pricing: a percent above 100 is 400 bad_request naming the field, and nothing changes', async (t) => {
  const m = await h.newMerchant('Pricing');
  const before = (await h.admin('GET', `/admin/merchants/${m.merchantId}`)).body.pricing;
  for (const percent of ['100.5', '100.0001', '101', '150', '1000']) {
    for (const flow of ['payin', 'payout', 'transfer']) {
      const r = await pricing(m.merchantId, { [flow]: { percent, fixed: '0' } });
      t.equal(r.status, 400, `${flow} ${percent}`);
      t.equal(r.body.error.code, 'bad_request');
      t.ok(fields(r).includes(`${flow}.percent`), `${flow} ${percent} names ${flow}.percent: ${JSON.stringify(fields(r))}`);
    }
  }
  t.same((await h.admin('GET', `/admin/merchants/${m.merchantId}`)).body.pricing, before, 'the pricing is unchanged');
  for (const percent of ['100', '100.0', '99.9999', '0']) {
    const r = await pricing(m.merchantId, { payin: { percent, fixed: '0' } });
    t.equal(r.status, 200, `${percent} is accepted`);
    t.equal(r.body.payin.percent, percent);
  }
});

t.test('quotes after an accepted pricing: 201, the fee from the rule', async (t) => {
  const m = await h.newMerchant('Quoting');
  t.equal((await pricing(m.merchantId, { payin: { percent: '12.3456', fixed: '10' } })).status, 200);
  const q = await h.as(m, 'POST', '/quotes/payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '10000'), { idem: true });
  t.equal(q.status, 201);
  t.equal(q.body.total_fee, '1245', 'ceil(10000 × 12.3456 %) + 10 = 1235 + 10');
});

t.test('a percent above 100 already in the event store: quotes answer 400 bad_request, not 500', async (t) => {
  const m = await h.newMerchant('Legacy');
  // Written directly, as an operator could before the schema and the decision refused it.
  const event: MerchantEvent = {
    type: 'merchant.pricing_set',
    data: { pricing: { payin: { percent: '100.5', fixed: '0' }, payout: { percent: '1', fixed: '0' }, transfer: { percent: '2', fixed: '0' } }, at: new Date().toISOString() },
  };
  const append = await s.store.append([{ streamId: streams.merchant(m.merchantId), expectedVersion: 'any', events: toNew([event], { actor: 'test' }) }]);
  await s.awaitReadModels(append.position);
  const q = await h.as(m, 'POST', '/quotes/payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '10000'), { idem: true });
  t.equal(q.status, 400);
  t.equal(q.body.error.code, 'bad_request');
  t.same(fields(q), ['pricing.payin.percent'], 'the account\'s rule is named');
  t.notMatch(q.text, /internal/i);
  const payout = await h.as(m, 'POST', '/quotes/payout', leg('CM_MTN_MOMO', 'CM', 'XAF', '10000'), { idem: true });
  t.equal(payout.status, 201, 'the other flows still quote');
  // The operator repairs it: quotes work again.
  t.equal((await pricing(m.merchantId, { payin: { percent: '1.5', fixed: '0' } })).status, 200);
  t.equal((await h.as(m, 'POST', '/quotes/payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '10000'), { idem: true })).status, 201);
});
