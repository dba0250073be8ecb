// A wallet's movements never go back in time along its versions (domain/wallet.ts): a decision taken
// with a clock behind the wallet's last movement (another process's) is dated at that movement, so
// the balances as of T are those of the last movement before T (projections/wallet-history.ts).
import t from 'tap';
import * as W from '../domain/wallet.ts';
import { fold } from '../domain/decider.ts';

const merchantId = '11111111-1111-4111-8111-111111111111';
const topUp = (s: W.WalletState, entryId: string, at: string) =>
  W.walletDecider.decide({ type: 'TopUp', data: { merchantId, currency: 'XOF', at, entryId, amount: 1000n } }, s);

t.test('a later movement decided with an earlier clock is dated at the previous movement', async (t) => {
  const first = topUp(W.walletDecider.initialState(), 'e1', '2026-06-01T10:00:05.000Z');
  const s1 = fold(W.walletDecider, first);
  const late = topUp(s1, 'e2', '2026-06-01T10:00:01.000Z');
  t.equal(late[0]!.data.at, '2026-06-01T10:00:05.000Z', 'not before the movement it follows');
  const s2 = fold(W.walletDecider, late, s1);
  const onTime = topUp(s2, 'e3', '2026-06-01T10:00:09.000Z');
  t.equal(onTime[0]!.data.at, '2026-06-01T10:00:09.000Z', 'a clock ahead is taken as it is');
});
