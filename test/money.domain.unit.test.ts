// Money arithmetic: amounts as whole francs, fees rounded up, and the fixed-payout inversion.
import t from 'tap';
import { DomainError } from '../domain/errors.ts';
import { checkAmountRange, feeFor, grossForNet, netOf, parseAmount, parsePercent, type FeeRule } from '../domain/money.ts';

const refusal = (f: () => unknown): DomainError | undefined => {
  try {
    f();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  return undefined;
};

t.test('amounts: decimal strings of whole francs', async (t) => {
  t.equal(parseAmount('5000', 'send_amount'), 5000n);
  t.equal(parseAmount('5000.00', 'send_amount'), 5000n, '"5000.00" is read as "5000"');
  t.equal(parseAmount('0100', 'send_amount'), 100n);
  const frac = refusal(() => parseAmount('5000.50', 'send_amount'));
  t.equal(frac?.code, 'bad_request', 'a fractional part other than zeros is refused');
  t.same(frac?.details?.map((d) => d.field), ['send_amount'], 'naming the field');
  t.equal(refusal(() => parseAmount('1e3', 'amount'))?.code, 'bad_request');
  t.equal(refusal(() => parseAmount('-5', 'amount'))?.code, 'bad_request');
  t.equal(refusal(() => checkAmountRange(99n, 'amount'))?.code, 'amount_out_of_range');
  t.equal(refusal(() => checkAmountRange(1_000_001n, 'amount'))?.code, 'amount_out_of_range');
  t.equal(refusal(() => checkAmountRange(100n, 'amount')), undefined, '100 is allowed');
  t.equal(refusal(() => checkAmountRange(1_000_000n, 'amount')), undefined, '1,000,000 is allowed');
  t.equal(refusal(() => parseAmount('9'.repeat(40), 'amount'))?.code, 'amount_out_of_range', 'absurdly long amounts are out of range');
});

t.test('percent strings are exact rationals', async (t) => {
  t.same(parsePercent('1.5'), { num: 15n, den: 10n });
  t.same(parsePercent('2'), { num: 2n, den: 1n });
  t.same(parsePercent('0.333'), { num: 333n, den: 1000n });
  t.throws(() => parsePercent('101'));
});

t.test('fee = ceil(amount × percent / 100) + fixed, rounded up to a franc', async (t) => {
  t.same(feeFor(5000n, { percent: '1.5', fixed: '0' }), { percentFee: 75n, fixedFee: 0n, total: 75n });
  t.same(feeFor(1001n, { percent: '1.5', fixed: '0' }), { percentFee: 16n, fixedFee: 0n, total: 16n }, '15.015 rounds up to 16');
  t.same(feeFor(1000n, { percent: '2.25', fixed: '50' }), { percentFee: 23n, fixedFee: 50n, total: 73n }, '22.5 → 23, plus 50');
  t.same(feeFor(100n, { percent: '1', fixed: '0' }), { percentFee: 1n, fixedFee: 0n, total: 1n });
  t.same(feeFor(12345n, { percent: '0', fixed: '10.00' }), { percentFee: 0n, fixedFee: 10n, total: 10n });
  // Against an independent computation in hundredths of a percent, for many amounts.
  for (let a = 100n; a <= 20_000n; a += 37n) {
    const exactTimes10000 = a * 225n; // 2.25 % of a, ×10000
    const expected = (exactTimes10000 + 9999n) / 10000n + 50n;
    if (feeFor(a, { percent: '2.25', fixed: '50' }).total !== expected) t.fail(`fee of ${a}`);
  }
  t.equal(netOf(5000n, { percent: '1.5', fixed: '0' }), 4925n);
});

t.test('fixed payout: the payin is the SMALLEST amount leaving exactly that payout after the fee', async (t) => {
  const rules: FeeRule[] = [
    { percent: '0', fixed: '0' }, { percent: '1', fixed: '0' }, { percent: '1.5', fixed: '0' }, { percent: '2', fixed: '0' },
    { percent: '2.25', fixed: '50' }, { percent: '0.333', fixed: '1' }, { percent: '7.77', fixed: '0' },
    { percent: '33.3333', fixed: '999' }, { percent: '99.9', fixed: '0' }, { percent: '50', fixed: '5' },
  ];
  const nets: bigint[] = [];
  for (let n = 100n; n <= 5000n; n += 13n) nets.push(n);
  let seed = 42n;
  for (let i = 0; i < 300; i++) {
    seed = (seed * 6364136223846793005n + 1442695040888963407n) % (1n << 64n);
    nets.push(100n + (seed % 999_901n));
  }
  let checked = 0;
  for (const rule of rules) {
    for (const net of nets) {
      const gross = grossForNet(net, rule);
      if (gross === undefined) {
        t.fail(`no gross for ${net} at ${rule.percent}% + ${rule.fixed}`);
        continue;
      }
      if (netOf(gross, rule) !== net) t.fail(`net of ${gross} is not ${net} at ${rule.percent}% + ${rule.fixed}`);
      if (gross > 0n && netOf(gross - 1n, rule) >= net) t.fail(`${gross - 1n} already leaves ${net} at ${rule.percent}% + ${rule.fixed}`);
      checked++;
    }
  }
  t.equal(checked, rules.length * nets.length, `${checked} (rule, payout) pairs: exact and smallest`);
  t.equal(grossForNet(9800n, { percent: '2', fixed: '0' }), 10000n);
  t.equal(grossForNet(100n, { percent: '100', fixed: '0' }), undefined, 'a 100 % fee leaves nothing');
});
