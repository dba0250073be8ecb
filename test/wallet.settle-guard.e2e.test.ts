// The wallet keeps no ids of past movements (issue 32): a settlement's wallet events are safe only
// beside its payment's own events, appended at the payment's expected version. A settlement that
// would move the wallet without them is refused before anything is appended.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { topUp, wallet } from './helpers/money.ts';
import { settleOnWallet, walletSettlement } from '../commands/wallet-settlements.ts';
import { streams } from '../commands/streams.ts';
import { payinDecider } from '../domain/payin.ts';
import * as W from '../domain/wallet.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;

t.test('a wallet movement without its payment\'s events: refused, nothing appended', async (t) => {
  const m = await h.newMerchant('Guard');
  await topUp(h, m, 'XAF', '1000');
  const walletStream = streams.wallet(m.merchantId, 'XAF');
  const before = (await s.store.readStream(walletStream)).length;
  const payinStream = streams.payin('00000000-0000-4000-8000-000000000001');
  await t.rejects(settleOnWallet(s, walletStream, walletSettlement({
    streamId: payinStream, decider: payinDecider, meta: { actor: 'test' },
    decide: (_payin, w, at) => ({
      events: [],
      wallet: W.creditCollection(w, {
        merchantId: m.merchantId, currency: 'XAF', at, creditId: 'orphan', gross: 500n, fee: 0n, operatorCode: 'CM_MTN_MOMO', reference: { type: 'payin', id: 'orphan' },
      }),
    }),
  })), /a wallet movement without the payment's events/);
  t.equal((await s.store.readStream(walletStream)).length, before, 'nothing appended to the wallet');
  t.match(await wallet(h, m, 'XAF'), { available: '1000' });
});
