// What a transfer's events do to its merchant's wallets: the commands the wallet aggregate decides
// (domain/wallet.ts), appended with the transfer's events in one atomic append. Pure.
import { unreachable } from './decider.ts';
import { collectionReference, payoutReference, transferDecider, type TransferEvent, type TransferState } from './transfer.ts';
import type { MovementRef, WalletCommand } from './wallet.ts';

/**
 * What a transfer's events do to its merchant's wallets, as commands for the wallet aggregate, in
 * order (`state` is the transfer before the events):
 *   created              → the payout amount held in the payout currency (hold id = the first
 *                          disbursement's reference);
 *   collection completed → the wallet credited (payin_amount − total_fee) in the payin currency;
 *   collection failed    → the first hold released;
 *   disbursement done    → the attempt's hold posted;
 *   disbursement failed  → the attempt's hold released;
 *   relaunched           → the attempt's (new) amount held again.
 */
export function walletCommands(state: TransferState, events: TransferEvent[]): WalletCommand[] {
  const commands: WalletCommand[] = [];
  let s = state;
  for (const e of events) {
    s = transferDecider.evolve(s, e);
    const command = walletCommandFor(s, e);
    if (command) commands.push(command);
  }
  return commands;
}

/** The wallet command one event calls for, on the transfer as the event left it. */
function walletCommandFor(s: TransferState, e: TransferEvent): WalletCommand | undefined {
  const t = s.created!;
  const on = (currency: string) => ({ merchantId: t.merchant_id, currency, at: e.data.at });
  const reference: MovementRef = { type: 'transfer', id: t.transfer_id };
  const attempt = (n: number) => s.attempts.find((a) => a.attempt === n)!;
  switch (e.type) {
    case 'transfer.created':
      return { type: 'Hold', data: { ...on(t.payout_currency), holdId: payoutReference(t.transfer_id, 1), amount: BigInt(t.payout_amount), reference } };
    case 'transfer.payout.started':
      // Attempt 1's amount was held when the transfer was created.
      if (e.data.attempt === 1) return undefined;
      return { type: 'Hold', data: { ...on(t.payout_currency), holdId: e.data.leg_reference, amount: BigInt(e.data.amount), reference } };
    case 'transfer.payin.completed':
      return {
        type: 'CreditCollection',
        data: {
          ...on(t.payin_currency), creditId: collectionReference(t.transfer_id), gross: BigInt(t.payin_amount),
          fee: BigInt(t.total_fee), operatorCode: t.payer_operator_code, reference,
        },
      };
    case 'transfer.payin.failed':
      return { type: 'ReleaseHold', data: { ...on(t.payout_currency), holdId: payoutReference(t.transfer_id, 1), reason: e.data.reason } };
    case 'transfer.payout.completed': {
      const a = attempt(e.data.attempt);
      return { type: 'PostHold', data: { ...on(t.payout_currency), holdId: a.leg_reference, fee: 0n, operatorCode: String(a.recipient.operator_code) } };
    }
    case 'transfer.payout.failed':
      return { type: 'ReleaseHold', data: { ...on(t.payout_currency), holdId: attempt(e.data.attempt).leg_reference, reason: e.data.reason } };
    case 'transfer.collection_started':
    case 'transfer.collection_submitted':
    case 'transfer.payout.submitted':
    case 'transfer.completed':
    case 'transfer.failed':
      return undefined;
    default:
      return unreachable(e);
  }
}
