// What a mobile-money operator integration implements (MTN MoMo, pawaPay, … and the sandbox).
// The provider gateway (workers/provider-gateway.ts) is the only caller: it initiates legs, asks
// their status on a durable schedule, and feeds callbacks into the same completion path.
//
// A provider's answer to an initiation is one of three things, and the gateway acts on each
// differently (CONTRACT §15):
//   - a status (pending, completed, failed): the provider has the leg; it stays with it;
//   - `LegNotTaken`: the provider certainly did not take the leg (a connection refused before the
//     request was sent, or an answer that documents a refusal): the next provider may be tried;
//   - anything else thrown (a time-out, a 5xx, a reset after sending): in doubt. The leg stays, and
//     its status is asked with the same reference until the provider answers.

import type { FailureReason } from '../../domain/failure-reasons.ts';

/** `refund`: money of a completed collection given back to its payer (CONTRACT §9). */
export type LegKind = 'collection' | 'disbursement' | 'refund';

/** Why a leg failed, in words a merchant can act on (CONTRACT §15): the domain's list. */
export type { FailureReason };

/** A failure as the provider told it: its own code and message, and what it means for the merchant. */
export interface LegFailure {
  failureReason: FailureReason;
  provider: string;
  code: string;
  message: string;
}

export interface InitiateLeg {
  /**
   * Our reference for the leg: the provider's idempotency key (through `legId`: MoMo
   * `X-Reference-Id`, pawaPay `depositId`…). Initiating the same reference again must not move money again.
   */
  reference: string;
  kind: LegKind;
  operatorCode: string;
  /** E.164. */
  phone: string;
  /** Whole francs: a collection's send_amount, a disbursement's receive_amount, a refund's amount. */
  amount: bigint;
  currency: string;
  /** Collections on operators that require one; used once, never stored by the gateway. */
  otp?: string | undefined;
  /** The payment the leg belongs to (pawaPay `clientReferenceId`). */
  paymentId?: string | undefined;
  /** A refund: the reference of the collection leg it gives money back from. */
  refundOf?: string | undefined;
}

/** Which leg a status query is about: the provider asks each kind at its own endpoint. */
export interface LegLookup {
  reference: string;
  kind: LegKind;
}

/** The leg as the provider sees it. `reason` is the provider's own code. */
export type ProviderStatus =
  | { state: 'pending'; providerReference: string }
  | { state: 'completed'; providerReference: string }
  | { state: 'failed'; providerReference: string; reason: string; failure?: LegFailure | undefined };

export interface ProviderCallback {
  reference: string;
  status: ProviderStatus;
}

/** A callback that is not well-formed (or, for the sandbox, not authentic): answered 4xx, never acted on. */
export class CallbackRejected extends Error {
  override name = 'CallbackRejected';
}

/**
 * The provider certainly did not take the leg: nothing was sent, or the provider documented a
 * refusal. Safe to try the next provider with the same reference; `failure` says why when the
 * provider answered.
 */
export class LegNotTaken extends Error {
  override name = 'LegNotTaken';
  constructor(message: string, readonly failure?: LegFailure) {
    super(message);
  }
}

/** A callback request as it arrived (the raw body too: pawaPay signs its digest, RFC 9421). */
export interface CallbackRequest {
  method: string;
  /** The path and query as received, e.g. `/providers/pawapay/callbacks`. */
  path: string;
  /** The Host the request was sent to. */
  authority: string;
  /** A path parameter that names the leg (MTN: the X-Reference-Id in the callback URL). */
  legId?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
  body: unknown;
}

/**
 * What a callback tells: a verified outcome (only the sandbox, which signs with our own key), or a
 * hint that the leg with this provider id moved (a real provider's callback is never trusted: the
 * gateway re-reads the status before recording anything), or nothing to act on (a signature that
 * failed: answered 2xx and ignored).
 */
export type CallbackReading =
  | { kind: 'outcome'; callback: ProviderCallback }
  | { kind: 'hint'; legId: string }
  | { kind: 'ignored'; why: string };

export interface ProviderAdapter {
  readonly name: string;
  /** Whether this provider can carry legs of the operator (the routing refuses it otherwise). */
  serves(operatorCode: string): boolean;
  /** The provider's id for our leg reference (a UUID v4 for MTN and pawaPay); the same on every call. */
  legId(reference: string): string;
  /**
   * Starts the leg, or answers the leg already started under this reference (idempotent: a
   * duplicate answer leads to a status query). Throws LegNotTaken when certainly not taken; any
   * other throw is in doubt.
   */
  initiate(leg: InitiateLeg): Promise<ProviderStatus>;
  /** The leg's status now; undefined when the provider has never seen the reference. */
  status(leg: LegLookup): Promise<ProviderStatus | undefined>;
  /** Reads a callback (shape, signature); throws CallbackRejected when it is not well-formed. */
  readCallback(req: CallbackRequest): Promise<CallbackReading>;
}

/** MTN MoMo Open API settings (CONTRACT §15): an adapter exists when all credentials are set. */
export interface MtnMomoSettings {
  baseUrl: string;
  targetEnvironment: string;
  collection: { subscriptionKey: string; apiUser: string; apiKey: string };
  disbursement: { subscriptionKey: string; apiUser: string; apiKey: string };
  /** Sent instead of the payment's currency (MTN's sandbox takes only EUR). */
  currencyOverride?: string | undefined;
}

/** pawaPay v2 settings. */
export interface PawapaySettings {
  baseUrl: string;
  apiToken: string;
}

/** What every real adapter is built with. */
export interface RemoteProviderOptions {
  /** One provider call's time-out (PROVIDER_TIMEOUT_MS). */
  timeoutMs: number;
  /** `{PUBLIC_BASE_URL}`: callbacks arrive under `{publicBaseUrl}/providers/…`; none sent without it. */
  publicBaseUrl?: string | undefined;
  /** Milliseconds since the epoch; injected so tests can move time (token expiry). */
  now: () => number;
}
