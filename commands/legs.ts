// The provider gateway's plug-in point: an aggregate that owns provider legs (payins, payouts, and
// the transfer's collection and disbursement legs) implements LegOwner and is listed in
// commands/leg-owners.ts. The gateway then:
//   1. consumes the owner's trigger events from the bus (`events.<type>`) and reads each as a leg;
//   2. initiates the leg with the operator's adapter (idempotent by `reference`), records it in
//      `provider_legs`, calls `submitted`, and schedules a durable `provider-check` job (key = reference);
//   3. on the provider's final outcome, from the check job or a verified callback, calls `settled`
//      once or more: the owner appends its terminal event and the wallet effect atomically and decides
//      nothing when the leg is already settled, so a replay never moves money twice.
import type { Services } from './services.ts';
import type { LegOutcome } from '../domain/payment.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import type { LegKind } from '../infra/providers/types.ts';
import type { ForwardedEvent } from '../infra/bus/forwarded-event.ts';

export interface LegRequest {
  /** LegOwner.name: who is told of the outcome. */
  owner: string;
  /** Unique per leg and stable across redeliveries: the provider's idempotency key, the check job's key. */
  reference: string;
  kind: LegKind;
  operatorCode: string;
  /** E.164 phone of the party collected from or paid. */
  phone: string;
  amount: bigint;
  currency: string;
  /** A sealed OTP waits in the vault under `reference` (infra/otp-vault.ts). */
  otp: boolean;
  /** The payment the leg belongs to (a provider may keep it beside the leg: pawaPay `clientReferenceId`). */
  paymentId: string;
  /** A refund: the reference of the collection leg it gives money back from (its provider carries the refund). */
  refundOf?: string | undefined;
}

export interface LegOwner {
  name: string;
  /** Event types that start a leg, each read as the leg it starts (undefined: none). */
  triggers: Record<string, (event: ForwardedEvent) => LegRequest | undefined>;
  /**
   * Whether the leg still awaits its outcome (false: nothing to initiate or check any more). May
   * answer "open" from the aggregate cache (Aggregates.yesFromCache): a stale "open" only repeats
   * steps that are idempotent by reference (the provider's initiate, `submitted`, `settled`). A
   * "not open" is always confirmed on a fresh read: a lagging cache may not have the leg yet (a
   * transfer's next disbursement attempt), and answering "not open" then would drop the leg.
   */
  isOpen(s: Services, reference: string): Promise<boolean>;
  /** The provider accepted the leg under `providerReference`; idempotent. */
  submitted(s: Services, reference: string, providerReference: string, meta: EventMetadata): Promise<void>;
  /**
   * The final outcome; appends the terminal event and the wallet effect atomically; idempotent.
   * Answers the append's position (undefined when nothing was appended), for read-your-writes.
   */
  settled(s: Services, reference: string, outcome: LegOutcome, meta: EventMetadata): Promise<bigint | undefined>;
}
