// What a mobile-money operator integration implements (MTN MoMo, Orange Money, … and the sandbox).
// The provider gateway (workers/provider-gateway.ts) is the only caller: it initiates legs, asks
// their status on a durable schedule, and feeds verified callbacks into the same completion path.

/** `refund`: money of a completed collection given back to its payer (CONTRACT §9). */
export type LegKind = 'collection' | 'disbursement' | 'refund';

export interface InitiateLeg {
  /**
   * Our reference for the leg: the provider's idempotency key (MoMo `X-Reference-Id`, Orange
   * `order_id`…). Initiating the same reference again must not move money again.
   */
  reference: string;
  kind: LegKind;
  operatorCode: string;
  /** E.164. */
  phone: string;
  /** Whole francs. */
  amount: bigint;
  currency: string;
  /** Collections on operators that require one; used once, never stored by the gateway. */
  otp?: string | undefined;
}

/** The leg as the provider sees it. */
export type ProviderStatus =
  | { state: 'pending'; providerReference: string }
  | { state: 'completed'; providerReference: string }
  | { state: 'failed'; providerReference: string; reason: string };

export interface ProviderCallback {
  reference: string;
  status: ProviderStatus;
}

/** A callback that is not authentic (bad signature, unknown shape): answered 401, never acted on. */
export class CallbackRejected extends Error {
  override name = 'CallbackRejected';
}

export interface ProviderAdapter {
  readonly name: string;
  /** Starts the leg, or answers the leg already started under this reference (idempotent). */
  initiate(leg: InitiateLeg): Promise<ProviderStatus>;
  /** The leg's status now; undefined when the provider has never seen the reference. */
  status(reference: string): Promise<ProviderStatus | undefined>;
  /** Verifies an operator callback (signature, shape) and reads it; throws CallbackRejected otherwise. */
  parseCallback(body: unknown, headers: Record<string, string | string[] | undefined>): Promise<ProviderCallback>;
}
