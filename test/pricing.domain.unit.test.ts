// Pricing is operator input that every quote computes with: a percent above 100 (or not a percent)
// is a 400 bad_request naming its field, from the merchant decision and from the money arithmetic,
// never a plain Error (which the API would answer with a 500).
import t from 'tap';
import { DomainError } from '../domain/errors.ts';
import { checkFeeRule, feeFor, grossForNet, parsePercent } from '../domain/money.ts';
import * as M from '../domain/merchant.ts';
import { deciderSpec } from './helpers/spec.ts';

const refusal = (f: () => unknown): DomainError | undefined => {
  try {
    f();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err; // a plain Error fails the test
  }
  return undefined;
};

const AT = '2026-06-01T10:00:00.000Z';
const created = M.merchantDecider.decide({ type: 'CreateMerchant', data: { merchantId: 'm-1', name: 'Acme', at: AT } }, M.merchantDecider.initialState());
/** Given a merchant (just created, default pricing). */
const merchant = () => deciderSpec(M.merchantDecider).given(created);
const setPricing = (pricing: Partial<M.Pricing>): M.MerchantCommand => ({ type: 'SetPricing', data: { pricing, at: AT } });

t.test('parsePercent: 0 to 100 inclusive; anything else is a DomainError naming the field', async (t) => {
  t.same(parsePercent('100'), { num: 100n, den: 1n });
  t.same(parsePercent('100.0000'), { num: 1000000n, den: 10000n });
  t.same(parsePercent('0'), { num: 0n, den: 1n });
  t.same(parsePercent('99.9999'), { num: 999999n, den: 10000n });
  for (const raw of ['100.5', '100.0001', '101', '999']) {
    const e = refusal(() => parsePercent(raw, 'payin.percent'));
    t.equal(e?.code, 'bad_request', `${raw} is refused`);
    t.same(e?.details?.map((d) => d.field), ['payin.percent'], `${raw}: the field is named`);
  }
  for (const raw of ['', 'abc', '-1', '1.', '1e2', '1,5', '1000']) {
    t.equal(refusal(() => parsePercent(raw))?.code, 'bad_request', `${JSON.stringify(raw)} is refused`);
  }
  t.same(refusal(() => parsePercent('abc'))?.details?.map((d) => d.field), ['percent'], 'named "percent" by default');
});

t.test('the fee arithmetic refuses a broken rule with a DomainError, never a plain Error', async (t) => {
  t.equal(refusal(() => feeFor(5000n, { percent: '100.5', fixed: '0' }))?.code, 'bad_request');
  t.equal(refusal(() => feeFor(5000n, { percent: '1', fixed: '1.5' }))?.code, 'bad_request', 'a fractional fixed fee');
  t.equal(refusal(() => grossForNet(5000n, { percent: '100.5', fixed: '0' }))?.code, 'bad_request');
  t.same(feeFor(5000n, { percent: '100', fixed: '0' }).total, 5000n, '100 % is the whole amount');
  t.same(refusal(() => checkFeeRule({ percent: '100.5', fixed: '2.5' }, 'payout'))?.details?.map((d) => d.field), ['payout.percent']);
  t.same(refusal(() => checkFeeRule({ percent: '1', fixed: '2.5' }, 'payout'))?.details?.map((d) => d.field), ['payout.fixed']);
});

t.test('given a merchant, when pricing sets a percent above 100, then 400 naming each bad field, no event', async (t) => {
  const e = merchant().when(setPricing({
    payin: { percent: '100.5', fixed: '0' }, payout: { percent: '1', fixed: '0' }, transfer: { percent: '250', fixed: '0.5' },
  })).thenThrows(t, 'bad_request');
  t.same(e?.details?.map((d) => d.field), ['payin.percent', 'transfer.percent'], 'every bad field, by flow');
  const fixed = merchant().when(setPricing({ transfer: { percent: '2', fixed: '0.5' } })).thenThrows(t, 'bad_request');
  t.same(fixed?.details?.map((d) => d.field), ['transfer.fixed']);
});

t.test('given a merchant, when pricing is 0 to 100 %, then it is set', async (t) => {
  const given = merchant();
  const events = given.when(setPricing({ payin: { percent: '100', fixed: '0' }, payout: { percent: '0', fixed: '25' } })).events();
  t.equal(events.length, 1);
  const after = events.reduce(M.merchantDecider.evolve, given.state);
  t.same(after.pricing, { payin: { percent: '100', fixed: '0' }, payout: { percent: '0', fixed: '25' }, transfer: M.DEFAULT_PRICING.transfer });
});
