// The API JSON of a payin, from its state alone: GET /payins/{id}, lists, the read model and webhook
// snapshots all use this one function, so they never drift. Never any OTP or secret.
import { invariant } from '../../domain/errors.ts';
import type { PayinState } from '../../domain/payin.ts';
import { renderPayment } from './payment-common.ts';

export function renderPayin(state: PayinState): Record<string, unknown> {
  invariant(state.exists && state.created, 'rendering a payin that does not exist');
  const c = state.created;
  return renderPayment(c.payin_id, c, state, { source: c.source });
}
