// Starting a provider leg (CONTRACT §15): at the first provider of its operator's routing, moving to
// the next only when that one certainly did not take it, and staying with the provider that took it.
//
//   provider answers a status ──────────► the leg is its own: submitted; settled, or checked later
//   LegNotTaken (nothing sent, or a documented refusal) ──► the next provider, same reference
//   ProviderInDoubt (a time-out, a 5xx, a reset) ─► in doubt: the leg stays; its status is asked
//                                                    (leg-checks.ts) until the provider answers
//   anything else (our database, a bug) ────────► thrown: the trigger comes again (same reference)
//   every provider refused ─────────────────────► the leg fails with the last refusal
//
// The leg's `provider_legs` row names the provider being asked, written before the request, so a
// restarted or redelivered start picks up with the same provider (asked again under the same
// reference: the provider dedupes it) and never asks an earlier one again. Wherever a leg can be
// refused (any provider but the sandbox alone), one start at a time holds the leg across processes
// (a lease on its row, no connection held during the provider calls), and only the holder moves the
// row on: two of them could otherwise each read the other's request as not there yet, or leave one
// provider after its refusal while the other asks it again.
//
// A refusal is of one request. When the provider may have the leg from an earlier start (one that
// asked it, or died holding the leg: the hold's release records which), the refusal of this request
// proves nothing about the leg (no token to send it, the provider unreachable for a moment, a body
// checked before the duplicate): its status decides: found, the leg is that provider's; never seen,
// the refusal stands; not answered, the leg is in doubt and its status is asked until it is.
import type { Services } from './services.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import type { LegOutcome } from '../domain/payment.ts';
import type { LegRequest } from './legs.ts';
import * as A from '../domain/operator-availability.ts';
import { DEFAULT_ROUTING } from '../domain/operator-routing.ts';
import { otpVault } from '../infra/otp-vault.ts';
import { adapter } from '../infra/providers/index.ts';
import { LegNotTaken, type LegFailure, type ProviderStatus } from '../infra/providers/types.ts';
import { ProviderInDoubt } from '../infra/providers/http.ts';
import { crashPoint } from '../infra/crash-points.ts';
import { streams } from './streams.ts';
import { legOwnerNamed, legOutcomeOf, observeLegSettled } from './leg-outcomes.ts';
import { claimLeg, extendHold, holdStart, legRowOf, moveLeg, releaseStart, setProviderReference, type NewLeg } from './provider-legs.ts';

export const CHECK_JOB = 'provider-check';

/** The leg as asked, kept with its status check so a leg the provider never took can be asked again (never its OTP). */
export interface StoredLeg {
  owner: string;
  operatorCode: string;
  phone: string;
  amount: string;
  currency: string;
  otp: boolean;
  paymentId: string;
  refundOf?: string | undefined;
}

export interface CheckPayload {
  reference: string;
  owner: string;
  provider: string;
  /** The event that started the leg: the settlement's causation (absent in jobs scheduled before it was kept). */
  causationId?: string;
  /** The leg's kind and first start (its provider_legs row), for the latency metric without a read. */
  kind?: string;
  startedAt?: string;
  /** To start it again when the provider says it never saw it (absent in jobs from before). */
  leg?: StoredLeg;
  /** The last initiation was in doubt: "never seen" then means "not taken", not an error. */
  inDoubt?: boolean;
}

/** When a leg's first status check is due at its provider. */
export function firstCheckDelayMs(s: Services, provider: string): number {
  return provider === 'sandbox' ? s.config.sandboxSettleMs : s.config.providers.firstCheckMs;
}

/** The providers to ask for a new leg, in order: a refund goes back through its payin's provider, else the routing. */
async function routingOf(s: Services, leg: LegRequest): Promise<readonly string[]> {
  if (leg.kind === 'refund' && leg.refundOf) return [(await legRowOf(s, leg.refundOf))?.provider ?? 'sandbox'];
  const { state } = await s.aggregates.load(streams.operator(leg.operatorCode), A.operatorAvailabilityDecider);
  return state.routing.length > 0 ? state.routing : DEFAULT_ROUTING;
}

/**
 * Initiates a leg with its operator's providers and schedules its status check. Safe to call any
 * number of times for one reference. Throws ProviderBusy or StartHeldElsewhere when the start must
 * be tried again a moment later (the caller's retry: the gateway's trigger comes again).
 */
export async function startLeg(s: Services, leg: LegRequest, meta: EventMetadata): Promise<void> {
  const owner = legOwnerNamed(leg.owner);
  if (!(await owner.isOpen(s, leg.reference))) return; // settled already: nothing to start
  const routing = await routingOf(s, leg);
  if (routing.length === 1 && routing[0] === 'sandbox') {
    // The sandbox alone: it answers from our own database and never refuses a leg it has, so two
    // starts at once get the same answer and need no hold. The leg's row is written, or read if a
    // start before wrote it, in one statement.
    const provider = await claimLeg(s, newLegRow(s, leg, 'sandbox'));
    if (provider === undefined) throw new StartHeldElsewhere(`leg ${leg.reference} is being started by another process`);
    if (provider === 'sandbox') return startOn(s, leg, ['sandbox'], meta, { mayHaveIt: false });
  }
  return startHeld(s, leg, routing, meta);
}

function newLegRow(s: Services, leg: LegRequest, provider: string): NewLeg {
  return { reference: leg.reference, owner: leg.owner, provider, providerLegId: adapter(s, provider).legId(leg.reference), kind: leg.kind, createdAt: s.clock.now() };
}

/**
 * Triggers the provider gateway (workers/provider-gateway.ts) handles at once in a process. Each
 * start waits on a few batched statements; under a saturating load of creates those waits are long
 * (the loop is busy with requests), so the starts fall behind the creates and catch up after. 16
 * at once against 8 (bench payin-create, every payin's work counted until it settled, runs taking
 * turns, bench/PROFILE.md §34): the starts' statements shared by twice as many legs, so the
 * service's CPU per pair 2.78 against 3.00 ms, PostgreSQL's 1.78 against 1.94, NATS's 0.31 against
 * 0.40; the backlog settled 6.8 s after the load instead of 8.4; creates/s even (1,072 against
 * 1,064). 24 saved about as much and took 7% of the creates/s.
 */
export const GATEWAY_CONSUMERS = 16;

/**
 * Starts of legs at one real provider in flight in this process: a provider that hangs holds at
 * most this many of the gateway's consumers (each until PROVIDER_TIMEOUT_MS), never all of them, so
 * other providers' legs go on with the 2 left. The sandbox
 * answers from our own database: it is not limited. Not fewer: a start refused here is tried again
 * later, every read before it made again, and at 3 a healthy provider's busy stretches were refused
 * so often that a payin through MTN cost 40% more CPU than one through the sandbox (bench
 * payin-create-mtn, 2026-11-27: 7.2 against 4.9 ms per pair; 5.6 against 5.0 at 6).
 */
export const PROVIDER_STARTS_IN_FLIGHT = GATEWAY_CONSUMERS - 2;
const inFlight = new WeakMap<Services, Map<string, number>>();

/** Thrown when the provider's starts are all in flight here: the trigger is tried again shortly. */
export class ProviderBusy extends Error {
  override name = 'ProviderBusy';
}

/** Takes one of the provider's start slots in this process; the answer gives it back (once, however often called). */
function takeProviderSlot(s: Services, provider: string): () => void {
  if (provider === 'sandbox') return () => undefined;
  let counts = inFlight.get(s);
  if (!counts) inFlight.set(s, (counts = new Map()));
  const n = counts.get(provider) ?? 0;
  if (n >= PROVIDER_STARTS_IN_FLIGHT) throw new ProviderBusy(`${PROVIDER_STARTS_IN_FLIGHT} starts at ${provider} in flight`);
  counts.set(provider, n + 1);
  let given = false;
  return () => {
    if (given) return;
    given = true;
    counts.set(provider, (counts.get(provider) ?? 1) - 1);
  };
}

/**
 * The most calls one provider's start makes, each bounded by the provider time-out (MTN: a token,
 * the payee check, the request, a token and the request again after a 401, the status after a 409
 * or after a refusal): a start's hold on its leg covers that many for the provider it is asking.
 */
const CALLS_PER_PROVIDER_START = 8;

/**
 * A start at providers that can refuse a leg holds it, one start at a time across processes: two of
 * them could otherwise each read the other's request as not there yet, and fail the leg over, or fail
 * it, while the other's request is taken. The first provider's slot first: a start refused as busy
 * leaves no row and no hold, so when it comes again it follows the routing of then.
 */
async function startHeld(s: Services, leg: LegRequest, routing: readonly string[], meta: EventMetadata): Promise<void> {
  const first = routing[0]!;
  const release = await firstSlot(s, leg, first);
  const holdMs = (CALLS_PER_PROVIDER_START + 1) * s.config.providers.timeoutMs;
  let held: Held | undefined;
  try {
    // The row first, at the routing's first provider unless a start before wrote it (never moved
    // here: a start that read the row before another one failed the leg over would move it back).
    const hold = (await claimLeg(s, newLegRow(s, leg, first))) && (await holdStart(s, leg.reference, holdMs));
    if (!hold) throw new StartHeldElsewhere(`leg ${leg.reference} is being started by another process`);
    const at = routing.indexOf(hold.provider);
    const route = at < 0 ? [hold.provider] : routing.slice(at);
    if (route[0] !== first) release(); // its row names another provider: that one's slot is taken there
    held = { mayHaveIt: hold.mayHaveIt, hold: { token: hold.token, ms: holdMs }, ...(route[0] === first ? { slot: release } : {}) };
    await startOn(s, leg, route, meta, held);
  } finally {
    release();
    if (held?.hold) {
      await releaseStart(s, leg.reference, held.hold.token, held.mayHaveIt)
        .catch((err: unknown) => s.log.warn({ err, reference: leg.reference }, 'releasing a leg\'s start failed: it expires'));
    }
  }
}

/**
 * The routing's first provider's start slot. When that provider is busy, a leg whose row names
 * another provider (moved on earlier) does not wait for it: that provider's slot is taken in
 * startOn. The row is read only then.
 */
async function firstSlot(s: Services, leg: LegRequest, first: string): Promise<() => void> {
  try {
    return takeProviderSlot(s, first);
  } catch (err) {
    if (!(err instanceof ProviderBusy)) throw err;
    const row = await legRowOf(s, leg.reference);
    if (!row || row.provider === first) throw err;
    return () => undefined;
  }
}

/** Another start holds the leg: the trigger is tried again later (the bus redelivers), when that one is done or dead. */
export class StartHeldElsewhere extends Error {
  override name = 'StartHeldElsewhere';
}

/**
 * How a start holds its leg: `mayHaveIt`, the provider the row names may have it (from an earlier
 * start, or from this one once it asked); `slot`, the first provider's start slot, taken before the
 * claim; `hold`, this start's hold (none at the sandbox alone): its token, renewed for `ms` at a time.
 */
interface Held {
  mayHaveIt: boolean;
  slot?: () => void;
  hold?: { token: string; ms: number };
}

/** What asking one provider came to. */
type Asked = { kind: 'taken'; status: ProviderStatus } | { kind: 'refused'; failure: LegFailure } | { kind: 'in-doubt'; err: unknown };

async function startOn(s: Services, leg: LegRequest, route: readonly string[], meta: EventMetadata, held: Held): Promise<void> {
  const vault = otpVault(s);
  const otp = leg.otp ? await vault.peek(leg.reference) : undefined;
  let refusal: LegFailure | undefined;
  for (const [i, provider] of route.entries()) {
    // The previous provider's certain refusal is recorded first (the row moves on), so a start
    // interrupted from here on (this provider busy, a crash) picks up at this provider, not there.
    if (i > 0) await moveOn(s, leg, provider, held);
    const release = i === 0 && held.slot ? held.slot : takeProviderSlot(s, provider);
    let asked: Asked;
    try {
      asked = await ask(s, leg, provider, otp, held.mayHaveIt);
    } catch (err) {
      held.mayHaveIt = true; // not the provider's answer: whatever it was, the request may have left
      throw err;
    } finally {
      release();
    }
    if (asked.kind !== 'refused') held.mayHaveIt = true;
    if (asked.kind === 'refused') {
      refusal = asked.failure;
      s.log.warn({ reference: leg.reference, provider, code: refusal.code }, 'provider did not take the leg: trying the next one');
      continue;
    }
    if (asked.kind === 'in-doubt') {
      // The provider may have the leg. It stays there; its status decides (leg-checks.ts).
      s.log.warn({ err: asked.err, reference: leg.reference, provider }, 'leg initiation in doubt: its status will be asked');
      if (leg.otp) await vault.discard(leg.reference); // never kept: a leg never taken with it fails `expired`
      await scheduleCheck(s, leg, provider, meta, { inDoubt: true });
      return;
    }
    crashPoint('after-provider-call');
    // The provider has the OTP now (or the leg was started before): it has no further use here.
    if (leg.otp) await vault.discard(leg.reference);
    await taken(s, leg, provider, asked.status, meta);
    return;
  }
  // Failing the leg is for one start alone: one whose hold expired (a stall longer than it) and was
  // taken by another start, which may have had the leg taken meanwhile, must not.
  await renewHold(leg, held, (hold) => extendHold(s, hold.token, leg.reference, hold.ms));
  if (leg.otp) await vault.discard(leg.reference);
  await refused(s, leg, refusal, meta);
}

/** The leg's row moves to the next provider (never asked for it yet), under this start's hold, extended for that provider's calls. */
async function moveOn(s: Services, leg: LegRequest, provider: string, held: Held): Promise<void> {
  await renewHold(leg, held, (hold) => moveLeg(s, hold.token, newLegRow(s, leg, provider), hold.ms));
  held.mayHaveIt = false;
}

/** Renews this start's hold by `renew` (which answers the new token); StartHeldElsewhere once it is no longer this start's. */
async function renewHold(leg: LegRequest, held: Held, renew: (hold: { token: string; ms: number }) => Promise<string | undefined>): Promise<void> {
  if (!held.hold) return; // the sandbox alone: nothing held
  const token = await renew(held.hold);
  if (!token) throw new StartHeldElsewhere(`leg ${leg.reference}: this start's hold expired and another start holds it`);
  held.hold.token = token;
}

/**
 * Asks one provider to take the leg. `mayHaveIt`: an earlier start may have sent it there, so a
 * refusal of this request is checked against the leg's status (see the head of this file).
 * Anything but the provider's answer (our database, a bug) is thrown: the trigger comes again
 * under the same reference, the sealed OTP kept for it, as after a crash at this point.
 */
async function ask(s: Services, leg: LegRequest, provider: string, otp: string | undefined, mayHaveIt: boolean): Promise<Asked> {
  const p = adapter(s, provider);
  try {
    const status = await s.metrics.timeProvider(provider, 'initiate', () => p.initiate({
      reference: leg.reference, kind: leg.kind, operatorCode: leg.operatorCode, phone: leg.phone, amount: leg.amount,
      currency: leg.currency, otp, paymentId: leg.paymentId, refundOf: leg.refundOf,
    }));
    return { kind: 'taken', status };
  } catch (err) {
    if (err instanceof ProviderInDoubt) return { kind: 'in-doubt', err };
    if (!(err instanceof LegNotTaken)) throw err;
    const failure = err.failure ?? { failureReason: 'provider_error', provider, code: 'NOT_TAKEN', message: err.message };
    if (!mayHaveIt) return { kind: 'refused', failure };
    try {
      const status = await s.metrics.timeProvider(provider, 'status', () => p.status({ reference: leg.reference, kind: leg.kind }));
      return status ? { kind: 'taken', status } : { kind: 'refused', failure };
    } catch (statusErr) {
      return { kind: 'in-doubt', err: statusErr };
    }
  }
}

/** The provider has the leg: record its reference, settle it if final, else check it later. */
async function taken(s: Services, leg: LegRequest, provider: string, status: ProviderStatus, meta: EventMetadata): Promise<void> {
  const owner = legOwnerNamed(leg.owner);
  // Both only after the provider's answer, neither before the other: each is idempotent, and a
  // start that dies between them (or one of them failing) is started again by its redelivered
  // trigger under the same reference. Together they cost one round trip of the leg's start, not two.
  const [legRow] = await Promise.all([
    setProviderReference(s, leg.reference, status.providerReference),
    owner.submitted(s, leg.reference, status.providerReference, meta),
  ]);
  const outcome = legOutcomeOf(status);
  if (outcome) {
    await observeLegSettled(s, leg.reference, outcome, await owner.settled(s, leg.reference, outcome, meta), legRow);
    return;
  }
  await scheduleCheck(s, leg, provider, meta, { startedAt: legRow ? new Date(legRow.created_at).toISOString() : undefined });
}

/** No provider took the leg: it fails with the last refusal (nothing moved anywhere). */
export async function refused(s: Services, leg: { reference: string; owner: string }, failure: LegFailure | undefined, meta: EventMetadata): Promise<void> {
  const f = failure ?? { failureReason: 'provider_error', provider: 'none', code: 'NO_PROVIDER', message: 'no provider took the leg' };
  const outcome: LegOutcome = { ...legOutcomeOf({ state: 'failed', providerReference: '', reason: f.code, failure: f })!, providerReference: null };
  await observeLegSettled(s, leg.reference, outcome, await legOwnerNamed(leg.owner).settled(s, leg.reference, outcome, meta));
}

export async function scheduleCheck(
  s: Services, leg: LegRequest, provider: string, meta: EventMetadata, o: { inDoubt?: boolean; startedAt?: string | undefined },
): Promise<void> {
  const payload: CheckPayload = {
    reference: leg.reference, owner: leg.owner, provider, kind: leg.kind,
    ...(typeof meta.causationId === 'string' ? { causationId: meta.causationId } : {}),
    ...(o.startedAt ? { startedAt: o.startedAt } : {}),
    ...(o.inDoubt ? { inDoubt: true } : {}),
    leg: {
      owner: leg.owner, operatorCode: leg.operatorCode, phone: leg.phone, amount: leg.amount.toString(), currency: leg.currency, otp: leg.otp,
      paymentId: leg.paymentId, ...(leg.refundOf ? { refundOf: leg.refundOf } : {}),
    },
  };
  // Replacing: a check that starts the leg again (leg-checks.ts) schedules the next one from inside the
  // running job, whose end must not remove it (the replaced job has another lease).
  await s.scheduler.schedule(CHECK_JOB, leg.reference, payload, new Date(s.clock.now().getTime() + firstCheckDelayMs(s, provider)), { replace: true });
}
