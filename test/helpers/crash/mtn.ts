// The crash suite's provider leg in flight (issue 41): part of the payins (CI_MTN_MOMO, XOF) go
// through the MTN MoMo adapter to a simulator of MTN's API (test/simulators/mtn-momo.ts) that runs
// in the test process, so it outlives every kill of the service, as MTN outlives ours. Each payin's
// payer is a phone of its own whose legs end as the payment's plan says, some of them held PENDING
// at MTN for a few seconds before they end (released by a ticker: MTN then calls back, a hint the
// service follows with a status query, and a dead service catches up by its own checks); `stuck`
// payins stay PENDING at MTN for ever. Some initiations (and a few status queries) are answered
// slowly: held open until the adapter's time-out, with the leg recorded at MTN or not; some are
// answered 500 after MTN recorded the leg. So kills land while legs are being initiated, in doubt,
// or pending at MTN. Refunds of MTN payins go back through MTN (planned by the payin's reference).
//
// Afterwards (`check`): every MTN payin has exactly one request-to-pay leg at MTN (its payer's phone
// is its own, so a second leg under any other id would show), under the payin's id as X-Reference-Id,
// for its amount, in the state the service says; every refund of one has exactly one refund leg
// naming the payin; MTN holds no leg that no acknowledged payment names. The service's side (one
// terminal event per payment, the wallets, the audit) is checked with the rest of the load.
import { startMtnMomoSimulator, type MtnLeg, type MtnMomoSimulator, type MtnOutcome } from '../../simulators/mtn-momo.ts';
import type { Rng } from './rng.ts';
import type { Plan, PlannedPayment, ProviderSide } from './driver.ts';

const COLLECTION = { subscriptionKey: 'crash-col-sub-key', apiUser: 'c0c0c0d0-0000-4000-8000-000000000001', apiKey: 'crash-col-api-key' };
const DISBURSEMENT = { subscriptionKey: 'crash-dis-sub-key', apiUser: 'c0c0c0d0-0000-4000-8000-000000000002', apiKey: 'crash-dis-api-key' };
const REQUEST_TO_PAY = '/collection/v1_0/requesttopay';
/** One provider call's time-out in the service: how long a held-open answer keeps a leg in flight. */
export const MTN_TIMEOUT_MS = 1_500;
const HOLD_MS: [number, number] = [1_000, 6_000];

const SUCCESSFUL: MtnOutcome = { status: 'SUCCESSFUL' };
const failed = (reason: string): MtnOutcome => ({ status: 'FAILED', reason });
const finalOf = (plan: Plan, reason: string): MtnOutcome => (plan === 'fail' ? failed(reason) : SUCCESSFUL);

/** MTN's leg status for our payment status. */
const AGREES: Record<string, string[]> = { completed: ['SUCCESSFUL'], failed: ['FAILED'], pending: ['PENDING', 'CREATED', 'ONGOING'] };

/** A leg held PENDING at MTN until `due`; `replan` gives a leg MTN does not have yet its outcome. */
interface Held { due: number; outcome: MtnOutcome; matches: (leg: MtnLeg) => boolean; replan: () => void }

export interface MtnFigures {
  payins: number;
  refunds: number;
  legs: number;
  initiations: number;
  /** References initiated more than once (MTN answered the repeats 409, or never had the first). */
  resent: number;
  statusQueries: number;
  callbacks: number;
  held: number;
  slowInitiations: number;
  errorsAfterRecording: number;
  slowStatusQueries: number;
  /** Kills with MTN legs pending, and the legs pending at a kill that ended after it. */
  killsWithLegsPending: number;
  pendingAtKillThenEnded: number;
  /** Kills with MTN payins acknowledged but not (yet) taken by MTN: their initiation still to come or in flight. */
  killsWithInitiationsOwed: number;
}

export class MtnInFlight implements ProviderSide {
  readonly name = 'mtn_momo';
  readonly operator = { country: 'CI' as const, code: 'CI_MTN_MOMO', currency: 'XOF' };
  private readonly phones = new Set<string>();
  private readonly held: Held[] = [];
  private readonly pendingAtKills = new Set<string>();
  private readonly counts = { held: 0, slowInitiations: 0, errorsAfterRecording: 0, slowStatusQueries: 0, killsWithLegsPending: 0, killsWithInitiationsOwed: 0 };
  private readonly ticker: NodeJS.Timeout;

  private constructor(readonly sim: MtnMomoSimulator, private readonly rng: Rng) {
    this.ticker = setInterval(() => this.release(false), 200);
  }

  static async start(rng: Rng): Promise<MtnInFlight> {
    const sim = await startMtnMomoSimulator({ collection: COLLECTION, disbursement: DISBURSEMENT, targetEnvironment: 'sandbox', currency: 'EUR', callbacks: 'PUT' });
    return new MtnInFlight(sim, rng);
  }

  /** The service's settings for MTN (callbacks to `publicBaseUrl`). */
  env(publicBaseUrl: string): Record<string, string> {
    return {
      MTN_MOMO_BASE_URL: this.sim.url, MTN_MOMO_TARGET_ENVIRONMENT: 'sandbox', MTN_MOMO_CURRENCY: 'EUR',
      MTN_MOMO_COLLECTION_SUBSCRIPTION_KEY: COLLECTION.subscriptionKey, MTN_MOMO_COLLECTION_API_USER: COLLECTION.apiUser,
      MTN_MOMO_COLLECTION_API_KEY: COLLECTION.apiKey, MTN_MOMO_DISBURSEMENT_SUBSCRIPTION_KEY: DISBURSEMENT.subscriptionKey,
      MTN_MOMO_DISBURSEMENT_API_USER: DISBURSEMENT.apiUser, MTN_MOMO_DISBURSEMENT_API_KEY: DISBURSEMENT.apiKey,
      PROVIDER_TIMEOUT_MS: String(MTN_TIMEOUT_MS), PROVIDER_FIRST_CHECK_MS: '200', PUBLIC_BASE_URL: publicBaseUrl,
    };
  }

  /** A payer of its own whose request-to-pay ends as planned; sometimes the next initiation is slow or answered 500. */
  payer(plan: Plan): string {
    let phone: string;
    do phone = `+22507${String(this.rng.int(0, 99_999_999)).padStart(8, '0')}`; while (this.phones.has(phone));
    this.phones.add(phone);
    const msisdn = phone.slice(1);
    const holdIt = plan === 'stuck' || this.rng.chance(0.4);
    this.sim.plan(msisdn, holdIt ? { status: 'PENDING' } : finalOf(plan, 'APPROVAL_REJECTED'));
    if (holdIt && plan !== 'stuck') {
      this.hold(finalOf(plan, 'EXPIRED'), (leg) => leg.kind === 'requesttopay' && (leg.body.payer as { partyId?: string } | undefined)?.partyId === msisdn, () => this.sim.plan(msisdn, finalOf(plan, 'EXPIRED')));
    }
    this.maybeFault();
    return phone;
  }

  /** A refund of an MTN payin: MTN plans it by the payin's reference (its referenceIdToRefund). */
  refund(payinId: string, plan: Plan): void {
    const holdIt = plan === 'stuck' || this.rng.chance(0.3);
    this.sim.plan(payinId, holdIt ? { status: 'PENDING' } : finalOf(plan, 'NOT_ENOUGH_FUNDS'));
    if (holdIt && plan !== 'stuck') {
      this.hold(finalOf(plan, 'NOT_ENOUGH_FUNDS'), (leg) => leg.kind === 'refund' && leg.body.referenceIdToRefund === payinId, () => this.sim.plan(payinId, finalOf(plan, 'NOT_ENOUGH_FUNDS')));
    }
  }

  private hold(outcome: MtnOutcome, matches: (leg: MtnLeg) => boolean, replan: () => void): void {
    this.counts.held++;
    this.held.push({ due: Date.now() + this.rng.int(...HOLD_MS), outcome, matches, replan });
  }

  /** A quarter of the initiations meet a fault: held open to the time-out (leg recorded or not), or 500 after recording. */
  private maybeFault(): void {
    const roll = this.rng.next();
    if (roll < 0.1) {
      this.counts.slowInitiations++;
      this.sim.fault({ method: 'POST', path: REQUEST_TO_PAY, hang: true, record: this.rng.chance(0.5) });
    } else if (roll < 0.2) {
      this.counts.errorsAfterRecording++;
      this.sim.fault({ method: 'POST', path: REQUEST_TO_PAY, status: 500, record: true });
    } else if (roll < 0.25) {
      this.counts.slowStatusQueries++;
      this.sim.fault({ method: 'GET', path: `${REQUEST_TO_PAY}/`, hang: true });
    }
  }

  /** Ends the held legs that are due (all of them with `all`): MTN settles each and calls back. */
  private release(all: boolean): void {
    const now = Date.now();
    for (let i = this.held.length - 1; i >= 0; i--) {
      const h = this.held[i]!;
      if (!all && h.due > now) continue;
      this.held.splice(i, 1);
      h.replan();
      for (const leg of this.sim.legs.values()) {
        if (!h.matches(leg) || leg.status !== 'PENDING') continue;
        leg.planned = h.outcome;
        this.sim.settle(leg.referenceId);
      }
    }
  }

  /** Notes, as a life has just ended, what MTN had in flight for its payments. */
  atKill(payments: PlannedPayment[]): void {
    const pending = [...this.sim.legs.values()].filter((l) => l.status === 'PENDING');
    if (pending.length > 0) this.counts.killsWithLegsPending++;
    for (const l of pending) this.pendingAtKills.add(l.referenceId);
    const owed = payments.some((p) => p.provider === this.name && p.kind === 'payin' && !this.sim.legs.has(p.id));
    if (owed) this.counts.killsWithInitiationsOwed++;
  }

  /** The load is over: every held leg ends now (the ones planned stuck stay PENDING). */
  releaseAll(): void {
    this.release(true);
  }

  async stop(): Promise<void> {
    clearInterval(this.ticker);
    await this.sim.flushCallbacks();
    await this.sim.down();
  }

  /** MTN's books against the payments (see the head of this file): the problems found, and the figures. */
  check(payments: PlannedPayment[], finals: Map<string, any>): { problems: string[]; figures: MtnFigures } {
    const problems: string[] = [];
    const legs = [...this.sim.legs.values()];
    const ours = payments.filter((p) => p.provider === this.name);
    const agree = (what: string, leg: MtnLeg, final: any, amount: string) => {
      if (String(leg.body.amount) !== amount) problems.push(`${what}: MTN's leg is for ${String(leg.body.amount)}, the payment for ${amount}`);
      if (!AGREES[final.status]?.includes(leg.status)) problems.push(`${what}: ${final.status} here, ${leg.status} at MTN`);
    };
    for (const p of ours) {
      const final = finals.get(p.id);
      if (p.kind === 'payin') {
        const msisdn = String(final?.source?.phone ?? '').replace(/^\+/, '');
        const at = legs.filter((l) => l.kind === 'requesttopay' && (l.body.payer as { partyId?: string } | undefined)?.partyId === msisdn);
        if (at.length !== 1) problems.push(`payin ${p.id}: ${at.length} request-to-pay legs at MTN for its payer`);
        else if (at[0]!.referenceId !== p.id) problems.push(`payin ${p.id}: MTN's leg is under ${at[0]!.referenceId}`);
        else agree(`payin ${p.id}`, at[0]!, final, String(final.send_amount));
      } else if (p.kind === 'refund') {
        const at = legs.filter((l) => l.kind === 'refund' && l.body.referenceIdToRefund === final?.payin_id);
        if (at.length !== 1) problems.push(`refund ${p.id}: ${at.length} refund legs at MTN for payin ${final?.payin_id}`);
        else if (at[0]!.referenceId !== p.id) problems.push(`refund ${p.id}: MTN's leg is under ${at[0]!.referenceId}`);
        else agree(`refund ${p.id}`, at[0]!, final, String(final.amount));
      }
    }
    const known = new Set(ours.map((p) => p.id));
    for (const l of legs) if (!known.has(l.referenceId)) problems.push(`MTN has a ${l.kind} leg ${l.referenceId} that no acknowledged payment names`);
    const sent = new Map<string, number>();
    for (const r of this.sim.requests) {
      if (r.method !== 'POST' || !/^\/(collection\/v1_0\/requesttopay|disbursement\/v[12]_0\/refund)$/.test(r.path)) continue;
      const ref = String(r.headers['x-reference-id']);
      sent.set(ref, (sent.get(ref) ?? 0) + 1);
    }
    const ended = [...this.pendingAtKills].filter((ref) => ['SUCCESSFUL', 'FAILED'].includes(this.sim.legs.get(ref)?.status ?? '')).length;
    return {
      problems,
      figures: {
        payins: ours.filter((p) => p.kind === 'payin').length, refunds: ours.filter((p) => p.kind === 'refund').length, legs: legs.length,
        initiations: [...sent.values()].reduce((a, b) => a + b, 0), resent: [...sent.values()].filter((n) => n > 1).length,
        statusQueries: this.sim.requests.filter((r) => r.method === 'GET' && !r.path.includes('/accountholder/')).length,
        callbacks: this.sim.callbacks.length, ...this.counts, pendingAtKillThenEnded: ended,
      },
    };
  }
}
