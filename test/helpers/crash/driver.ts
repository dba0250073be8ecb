// The merchant side of the crash suite: a mixed load of payins, payouts and transfers (some planned to
// fail or stay pending by the sandbox's phone rules, failed disbursements relaunched, half the completed
// CM payins refunded in part, each refund planned by its amount's ending; with a real provider's side
// given, part of the payins go to its operator, planned by the payer it hands out, and half the
// completed ones are refunded through it), sent with Idempotency-Keys
// through a service that keeps dying. A request that meets a dead service (network error), an
// `idempotency_in_progress` (its first attempt's claim is still leased), a 5xx while the database is
// down or a 503 for a commit in doubt is retried with the same key, as a merchant would; whatever
// answers 2xx is recorded as acknowledged, with the plan the payment must end in.
import { randomBytes } from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Rng } from './rng.ts';

export type Plan = 'ok' | 'fail' | 'stuck';
export type PaymentKind = 'payin' | 'payout' | 'transfer' | 'refund';

export interface Acked {
  kind: 'customer' | 'quote' | PaymentKind | 'relaunch';
  id: string;
  idemKey: string;
  /** The 2xx answer. */
  body: any;
  /** HTTP attempts it took (more than 1: it was retried across a crash or an outage). */
  tries: number;
}

/** A payment the merchant was told exists, and how the sandbox must settle it. */
export interface PlannedPayment {
  kind: PaymentKind;
  id: string;
  acked: Acked;
  /** The quote it consumed ('' for a refund: it has none). */
  quoteId: string;
  /** payin: the payer; payout: the recipient; transfer: the payer (collection); refund: its amount's ending. */
  plan: Plan;
  /** transfer only: the first disbursement's recipient. */
  payoutPlan?: Plan;
  /** transfer only: a failed first disbursement is relaunched to a good recipient. */
  relaunch?: boolean;
  relaunched?: Acked;
  /** Its leg went to this real provider (a payin on its operator, or a refund of one), not the sandbox. */
  provider?: string;
}

/**
 * A real provider in the load (the crash suite's MTN simulator, helpers/crash/mtn.ts): payins on its
 * operator go to it, each payer handed out with the outcome planned at the provider.
 */
export interface ProviderSide {
  name: string;
  operator: { country: 'CI'; code: string; currency: string };
  /** A payer (E.164) whose collection ends as planned at the provider. */
  payer(plan: Plan): string;
  /** A refund of the payin is about to be asked: the provider is to end it as planned. */
  refund(payinId: string, plan: Plan): void;
}

export interface DriverStats {
  httpRequests: number;
  networkErrors: number;
  inProgressRetries: number;
  outage5xx: number;
  /** 503s of a life armed with the append-in-doubt point: a commit whose answer was lost. */
  inDoubt503: number;
  retriedAcks: number;
  /** Answers that should never happen: a 5xx outside a database outage, an unexpected 4xx. */
  unexpected: string[];
}

export interface DriverOptions {
  url: string;
  apiKey: string;
  apiSecret: string;
  rng: Rng;
  concurrency: number;
  /** True while the database is down (and shortly after): a 5xx then is retried, not a defect. */
  inOutage: () => boolean;
  /** True while the running life may tell a committed append's caller that its commit is in doubt (503). */
  inDoubtArmed: () => boolean;
  /**
   * When the newest life of the service became ready (epoch ms), or undefined while it is starting;
   * a life that died by itself keeps its instant. The driver's clocks count from it (see `call`).
   */
  lifeReadyAt: () => number | undefined;
  /** How long a request is retried in one ready life without a final answer before the driver gives up (a defect: nothing recovers). */
  giveUpMs?: number;
  /** How long one HTTP attempt may take before the driver drops it and tries again (default 20 s). */
  requestTimeoutMs?: number;
  /** How long a follow-up waits for its payment's state while the newest life has been ready (default 180 s). */
  waitForStateMs?: number;
  /** A real provider taking part of the payins. */
  provider?: ProviderSide;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const REQUEST_TIMEOUT_MS = 20_000;
/** Operations waiting on the side for a dead claim's lease, at most. */
const MAX_PARKED = 16;
/** The running operation's "my key is held by a dead claim" hook (each merchant loop runs its own). */
const blockedHook = new AsyncLocalStorage<() => void>();

export class GaveUp extends Error {}

/**
 * What a request met instead of an answer: each kind counted, and the attempts in order as runs of
 * one kind (from when to when, how many), so that a request given up says whether it waited on a
 * dead service, a held claim or an answer that never came.
 */
class AttemptTrace {
  private static readonly RUNS_KEPT = 40;
  private readonly kinds = new Map<string, number>();
  private readonly runs: Array<{ what: string; from: number; to: number; n: number }> = [];
  private runsLeftOut = 0;
  private lastBody = '';

  constructor(private readonly began: number) {}

  add(what: string, sent: number, body?: string): void {
    this.kinds.set(what, (this.kinds.get(what) ?? 0) + 1);
    const run = this.runs.at(-1);
    const to = Date.now() - this.began;
    if (run?.what === what) {
      run.n++;
      run.to = to;
    } else {
      this.runs.push({ what, from: sent - this.began, to, n: 1 });
      if (this.runs.length > AttemptTrace.RUNS_KEPT) { this.runs.shift(); this.runsLeftOut++; }
    }
    if (body !== undefined) this.lastBody = body;
  }

  summary(): string {
    const s = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
    const kinds = [...this.kinds].map(([what, n]) => `${what} ×${n}`).join(', ');
    const runs = this.runs.map((r) => `${s(r.from)}-${s(r.to)} ${r.what} ×${r.n}`).join(', ');
    return `instead: ${kinds}; in order${this.runsLeftOut ? ` (the first ${this.runsLeftOut} runs left out)` : ''}: ${runs}; last body: ${this.lastBody.slice(0, 200)}`;
  }
}

/** What a failed fetch says: its error and, when there is one, the socket's code (refused, reset). */
function noAnswer(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } }).cause?.code;
  return `no answer (${(err as Error).name}${typeof cause === 'string' ? ` ${cause}` : ''})`;
}

interface Answer { status: number; body: any; text: string; tries: number }

/** Phones: the last two digits choose the sandbox outcome (99 fails, 98 stays pending). */
function phone(prefix: string, rng: Rng, plan: Plan): string {
  const ending = plan === 'fail' ? '99' : plan === 'stuck' ? '98' : String(rng.int(10, 97));
  return `${prefix}${String(rng.int(0, 99_999)).padStart(5, '0')}${ending}`;
}
const cmPhone = (rng: Rng, plan: Plan) => phone('+23767', rng, plan);
const snPhone = (rng: Rng, plan: Plan) => phone('+22177', rng, plan);
const party = (country: string, operator: string, p: string) => ({ country_code: country, rail_type: 'mobile_money', operator_code: operator, phone: p });
const recipient = (p: string) => ({ ...party('SN', 'SN_WAVE_MOMO', p), recipient_type: 'individual', first_name: 'Moussa', last_name: 'Ndiaye' });

export class Driver {
  readonly stats: DriverStats = { httpRequests: 0, networkErrors: 0, inProgressRetries: 0, outage5xx: 0, inDoubt503: 0, retriedAcks: 0, unexpected: [] };
  readonly acked: Acked[] = [];
  readonly payments: PlannedPayment[] = [];
  /** The customers the load pays for (created by createCustomers; CI only with a provider side). */
  readonly customers = { CM: '', SN: '', CI: '' };
  private stopping = false;
  /** Set by abandon(): the run has failed, and no request waits for the service any more. */
  private abandoned = false;
  private loops: Promise<void>[] = [];
  private followUps = new Set<Promise<void>>();
  private keyCounter = 0;
  private parked = 0;
  private readonly prefix = randomBytes(3).toString('hex');

  constructor(private readonly o: DriverOptions) {}

  private key(kind: string): string {
    return `crash-${this.prefix}-${kind}-${++this.keyCounter}`;
  }

  /**
   * How long the service's newest life has been ready, counted from `since` if that is later (0 while
   * it starts). Only this counts toward giving up: a request parked behind a dead claim spans many
   * lives, and on a loaded machine most of its wall time is lives starting (CI gave up on one after
   * 373 refused connections in 120 s). A life that answers in progress for ever, hangs, drops
   * connections or dies by itself (nothing starts another) still runs the clock.
   */
  private inThisLife(since: number): number {
    const ready = this.o.lifeReadyAt();
    return ready === undefined ? 0 : Date.now() - Math.max(since, ready);
  }

  /**
   * One request, retried with the same Idempotency-Key until the service gives a real answer.
   * `onBlocked` is told when the key is held by a claim whose process died (it frees after its lease).
   */
  async call(method: string, path: string, body?: unknown, idemKey?: string, onBlocked?: () => void): Promise<Answer> {
    const giveUpMs = this.o.giveUpMs ?? 120_000;
    const began = Date.now();
    const headers: Record<string, string> = { 'x-api-key': this.o.apiKey, 'x-api-secret': this.o.apiSecret };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idemKey) headers['idempotency-key'] = idemKey;
    // What came instead of an answer, so that giving up says why (CI shows a failure's own lines).
    const trace = new AttemptTrace(began);
    for (let tries = 1; ; tries++) {
      if (this.abandoned) throw new GaveUp(`${method} ${path} (key ${idemKey ?? '-'}): abandoned, the run has failed`);
      const inLife = this.inThisLife(began);
      if (inLife > giveUpMs) {
        throw new GaveUp(`${method} ${path} (key ${idemKey ?? '-'}) got no final answer in ${inLife} ms of the service's life (${Date.now() - began} ms in all; ${trace.summary()})`);
      }
      this.stats.httpRequests++;
      const sent = Date.now();
      let res: Response;
      let text: string;
      try {
        res = await fetch(this.o.url + path, {
          method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(this.o.requestTimeoutMs ?? REQUEST_TIMEOUT_MS),
        });
        text = await res.text();
      } catch (err) {
        this.stats.networkErrors++; // the service is down, died while answering, or took our time-out: same key again
        trace.add(noAnswer(err), sent);
        await sleep(200);
        continue;
      }
      let parsed: any;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
      if (res.status >= 500 || res.status === 409 || res.status === 429) {
        trace.add(`${res.status}${parsed?.error?.code ? ` ${parsed.error.code}` : ''}`, sent, text);
      }
      if (res.status === 409 && parsed?.error?.code === 'idempotency_in_progress') {
        this.stats.inProgressRetries++; // the first attempt died holding the claim: wait for its lease
        onBlocked?.();
        await sleep(500);
        continue;
      }
      if (res.status >= 500) {
        const outage = this.o.inOutage();
        // By then the service's "crash point reached" line (written before this answer) has been read.
        await sleep(300);
        // A commit in doubt counts as such even in a database outage's window (its plan step may follow a restart).
        if (res.status === 503 && this.o.inDoubtArmed()) this.stats.inDoubt503++;
        else if (outage) this.stats.outage5xx++;
        else this.stats.unexpected.push(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
        continue;
      }
      if (res.status === 429) {
        await sleep(200);
        continue;
      }
      return { status: res.status, body: parsed, text, tries };
    }
  }

  /** A create that must answer `status`; recorded as acknowledged. Anything else is unexpected. */
  private async create(kind: Acked['kind'], path: string, body: unknown, status = 201): Promise<Acked | undefined> {
    const idemKey = this.key(kind);
    const r = await this.call('POST', path, body, idemKey, blockedHook.getStore());
    if (r.status !== status) {
      this.stats.unexpected.push(`POST ${path} (key ${idemKey}, try ${r.tries}): ${r.status} ${r.text.slice(0, 300)}`);
      return undefined;
    }
    const a: Acked = { kind, id: r.body.id, idemKey, body: r.body, tries: r.tries };
    if (r.tries > 1) this.stats.retriedAcks++;
    this.acked.push(a);
    return a;
  }

  /** The customers the load uses (acknowledged like any create). */
  async createCustomers(): Promise<void> {
    for (const country of this.o.provider ? ['CM', 'SN', 'CI'] as const : ['CM', 'SN'] as const) {
      const c = await this.create('customer', '/customers', { first_name: 'Awa', last_name: 'Diop', country_code: country });
      if (!c) throw new Error(`customer: ${this.stats.unexpected.at(-1)}`);
      this.customers[country] = c.id;
    }
  }

  private async payin(): Promise<void> {
    const { rng, provider } = this.o;
    // A third to the real provider when there is one; of the rest, a fifth to SN_ORANGE_MOMO, which
    // needs an OTP to collect (000000 fails the collection).
    const real = provider !== undefined && rng.chance(1 / 3);
    const otp = !real && rng.chance(0.2);
    const plan: Plan = otp ? (rng.chance(0.2) ? 'fail' : 'ok') : rng.pick(['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'fail', 'fail', 'stuck'] as const);
    const amount = String(rng.int(1_000, 50_000));
    const [country, operator, currency, customer] = real
      ? [provider.operator.country, provider.operator.code, provider.operator.currency, this.customers.CI]
      : otp ? ['SN', 'SN_ORANGE_MOMO', 'XOF', this.customers.SN] : ['CM', 'CM_MTN_MOMO', 'XAF', this.customers.CM];
    const q = await this.create('quote', '/quotes/payin', {
      customer_id: customer, country_code: country, operator_code: operator, rail_type: 'mobile_money', send_amount: amount, send_currency: currency,
    });
    if (!q) return;
    const source = party(country, operator, real ? provider.payer(plan) : otp ? snPhone(rng, 'ok') : cmPhone(rng, plan));
    const extra = otp ? { otp: plan === 'fail' ? '000000' : String(rng.int(100_000, 999_999)) } : {};
    const p = await this.create('payin', '/payins', { quote_id: q.id, customer_id: customer, source, ...extra });
    if (!p) return;
    this.payments.push({ kind: 'payin', id: p.id, acked: p, quoteId: q.id, plan, ...(real ? { provider: provider.name } : {}) });
    if (plan === 'ok' && !otp && rng.chance(0.5)) this.follow(this.refundWhenCompleted(p, real ? provider : undefined));
  }

  /**
   * Once the payin completed, refunds part of it (CONTRACT §9): at most its net credit, so its wallet
   * always covers it (the XAF one is credited only by collections); the amount's ending plans the
   * outcome (the sandbox's rule; a real provider's payin is refunded through it, told the plan beforehand).
   */
  private async refundWhenCompleted(payin: Acked, provider?: ProviderSide): Promise<void> {
    const { rng } = this.o;
    const missed = await this.waitFor(`/payins/${payin.id}`, (b) => b.status === 'completed');
    if (missed !== undefined) {
      this.stats.unexpected.push(`payin ${payin.id} never completed, so was not refunded: ${missed}`);
      return;
    }
    const plan: Plan = rng.pick(['ok', 'ok', 'ok', 'fail', 'stuck'] as const);
    const ending = plan === 'fail' ? 99 : plan === 'stuck' ? 98 : rng.int(10, 97);
    const amount = rng.int(0, Math.floor((Number(payin.body.receive_amount) - 100) / 100)) * 100 + ending;
    provider?.refund(payin.id, plan);
    const refund = await this.create('refund', '/refunds', { payin_id: payin.id, amount: String(amount), reason: 'Crash suite' });
    if (refund) this.payments.push({ kind: 'refund', id: refund.id, acked: refund, quoteId: '', plan, ...(provider ? { provider: provider.name } : {}) });
  }

  private async payout(): Promise<void> {
    const { rng } = this.o;
    const plan: Plan = rng.pick(['ok', 'ok', 'ok', 'ok', 'ok', 'fail', 'fail', 'stuck'] as const);
    const q = await this.create('quote', '/quotes/payout', {
      customer_id: this.customers.SN, country_code: 'SN', operator_code: 'SN_WAVE_MOMO', rail_type: 'mobile_money',
      send_amount: String(rng.int(1_000, 20_000)), send_currency: 'XOF',
    });
    if (!q) return;
    const p = await this.create('payout', '/payouts', {
      quote_id: q.id, customer_id: this.customers.SN, payment_reason_text: 'Crash suite', recipient: recipient(snPhone(rng, plan)),
    });
    if (p) this.payments.push({ kind: 'payout', id: p.id, acked: p, quoteId: q.id, plan });
  }

  private async transfer(): Promise<void> {
    const { rng } = this.o;
    const plan: Plan = rng.pick(['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'fail', 'stuck'] as const);
    const payoutPlan: Plan = rng.pick(['ok', 'ok', 'ok', 'ok', 'fail', 'fail', 'fail', 'stuck'] as const);
    const relaunch = payoutPlan === 'fail' && rng.chance(0.8);
    const q = await this.create('quote', '/quotes/transfer', {
      customer_id: this.customers.CM, payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: 'SN_WAVE_MOMO',
      payin_currency: 'XAF', payout_currency: 'XOF', payin_amount: String(rng.int(2_000, 30_000)),
    });
    if (!q) return;
    const goodRecipient = recipient(snPhone(rng, 'ok'));
    const tr = await this.create('transfer', '/transfers', {
      quote_id: q.id, customer_id: this.customers.CM,
      payer: party('CM', 'CM_MTN_MOMO', cmPhone(rng, plan)), recipient: recipient(snPhone(rng, payoutPlan)),
    });
    if (!tr) return;
    const planned: PlannedPayment = { kind: 'transfer', id: tr.id, acked: tr, quoteId: q.id, plan, payoutPlan, relaunch: plan === 'ok' && relaunch };
    this.payments.push(planned);
    if (planned.relaunch) this.follow(this.relaunchWhenFailed(planned, goodRecipient));
  }

  /** Waits for the planned disbursement failure, then relaunches to a recipient who gets paid. */
  private async relaunchWhenFailed(p: PlannedPayment, to: Record<string, unknown>): Promise<void> {
    const missed = await this.waitFor(`/transfers/${p.id}`, (b) => b.status === 'failed' && b.payout_status === 'failed');
    if (missed !== undefined) {
      this.stats.unexpected.push(`transfer ${p.id} never reached the planned disbursement failure: ${missed}`);
      return;
    }
    p.relaunched = await this.create('relaunch', `/transfers/${p.id}/relaunch-payout`, { recipient: to }, 200);
  }

  /**
   * Polls `path` until its body is `done`; answers undefined then, or the last body once the service
   * has been ready for `waitForStateMs` without it (as `call` counts: within the newest life).
   */
  async waitFor(path: string, done: (body: any) => boolean): Promise<string | undefined> {
    const since = Date.now();
    for (;;) {
      const r = await this.call('GET', path);
      if (r.status === 200 && done(r.body)) return undefined;
      if (this.inThisLife(since) > (this.o.waitForStateMs ?? 180_000)) return r.text.slice(0, 300);
      await sleep(300);
    }
  }

  private follow(p: Promise<void>): void {
    const tracked = p.catch((err) => { this.stats.unexpected.push(`follow-up: ${(err as Error).message}`); })
      .finally(() => this.followUps.delete(tracked));
    this.followUps.add(tracked);
  }

  /** Starts `concurrency` merchant loops, each running one operation after the other. */
  start(): void {
    const { rng } = this.o;
    for (let i = 0; i < this.o.concurrency; i++) {
      this.loops.push((async () => {
        while (!this.stopping) {
          // An operation whose key is held by a dead process's claim waits out the lease (up to 30 s)
          // on the side, as a merchant's retry queue would, and the loop goes on with new work.
          while (this.parked >= MAX_PARKED && !this.stopping) await sleep(200);
          const roll = rng.next();
          let park!: () => void;
          const parked = new Promise<void>((r) => { park = r; });
          let isParked = false;
          const onBlocked = () => {
            if (isParked) return;
            isParked = true;
            this.parked++;
            park();
          };
          const op = blockedHook.run(onBlocked, async () => {
            if (roll < 0.35) await this.payin();
            else if (roll < 0.6) await this.payout();
            else await this.transfer();
          }).finally(() => { if (isParked) this.parked--; });
          this.follow(op);
          await Promise.race([op.catch(() => undefined), parked]);
        }
      })());
    }
  }

  /**
   * The run failed (a life would not start, a step of the plan threw): every request gives up at its
   * next try, so that drain() ends at once instead of retrying a service that may never be ready.
   */
  abandon(): void {
    this.abandoned = true;
  }

  /** Stops starting operations; resolves once every operation and relaunch in flight has finished. */
  async drain(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
    while (this.followUps.size > 0) await Promise.all([...this.followUps]);
  }
}
