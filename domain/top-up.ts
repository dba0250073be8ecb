// A top-up (sandbox funding by the operator): one stream per top-up (`topup-<id>`) holding one
// `top_up.recorded` event, appended in the same atomic append as the wallet's `wallet.topped_up`
// with expected version 0. The stream, not the wallet, makes a top-up happen once (issue 32): the
// wallet keeps no ids of past top-ups, and a retry with the same id finds the stream and adds
// nothing. The id is the operator's Idempotency-Key's (commands/wallets.ts), so a retried request
// answers the same entry.
import { refuse } from './errors.ts';
import { unreachable, type CommandDecider, type DomainEvent } from './decider.ts';
import { formatMoney, type Money } from './money.ts';

export type TopUpEvent = DomainEvent<'top_up.recorded', {
  top_up_id: string;
  merchant_id: string;
  currency: string;
  /** Whole francs, decimal string. */
  amount: string;
  /** The operator's Idempotency-Key, if the request carried one. */
  idempotency_key: string | null;
  at: string;
}>;

export interface TopUpState {
  /** The top-up as recorded; null until it is. */
  recorded: TopUpEvent['data'] | null;
}

export type TopUpCommand = {
  type: 'RecordTopUp';
  data: { topUpId: string; merchantId: string; currency: string; amount: Money; idempotencyKey: string | null; at: string };
};

export const topUpDecider = {
  initialState: (): TopUpState => ({ recorded: null }),
  evolve(_s: TopUpState, e: TopUpEvent): TopUpState {
    switch (e.type) {
      case 'top_up.recorded':
        return { recorded: e.data };
      default:
        return unreachable(e.type);
    }
  },
  decide(command: TopUpCommand, s: TopUpState): TopUpEvent[] {
    switch (command.type) {
      case 'RecordTopUp':
        return record(s, command.data);
      default:
        return unreachable(command.type);
    }
  },
} satisfies CommandDecider<TopUpState, TopUpEvent, TopUpCommand>;

/**
 * Once per id: the same request again decides nothing (its retry answers the recorded entry); the
 * same key with another merchant, currency or amount is a conflict, as for every Idempotency-Key.
 */
function record(s: TopUpState, c: TopUpCommand['data']): TopUpEvent[] {
  const amount = formatMoney(c.amount);
  const was = s.recorded;
  if (was) {
    if (was.merchant_id === c.merchantId && was.currency === c.currency && was.amount === amount) return [];
    refuse('idempotency_conflict', 'This Idempotency-Key was used with a different request');
  }
  return [{
    type: 'top_up.recorded',
    data: { top_up_id: c.topUpId, merchant_id: c.merchantId, currency: c.currency, amount, idempotency_key: c.idempotencyKey, at: c.at },
  }];
}
