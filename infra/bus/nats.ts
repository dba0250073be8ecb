// The bus on NATS JetStream (@nats-io/transport-node + @nats-io/jetstream v3).
//
// Names: with prefix P (NATS_PREFIX, default `payments`) every subject is `P.<subject>`, the one
// stream is `P_bus` (subjects `P.>`) and a durable consumer D is `P_D`, so several deployments share
// one NATS without seeing each other. A durable with several subjects is one server consumer with
// them all as filters, or on servers before 2.10 (one filter each) one per subject, `P_D__<hash>`
// (see `layout`); when the layout changes, the new consumers start where the old ones stopped. The stream and the durable consumers are created at start
// when missing, and updated in place when their configuration changed (subjects, ack wait, limits).
//
// Delivery: pull consumers, explicit acks. Each consumer runs one pull loop that asks for as many
// messages as it has free handler slots (`concurrency`) and starts a handler on each as it arrives,
// so nothing waits in a client buffer while its ack wait runs out, and several processes using the
// same durable share its messages. While a handler runs, the message's ack
// timer is reset (`working()`, an in-progress ack) every third of the ack wait: a long handler is
// never redelivered while it runs. The outcome: ack; `{retryAfterMs}` → nak(delay); a throw →
// nak(backoffMs(deliveryCount)). Delays are always chosen here, never with the consumer `backoff`
// option (it silently replaces ack_wait). After maxDeliver failed deliveries the message is published
// to the dead-letter subject (the error and the original subject in headers) and terminated.
// The server-side max_deliver stays unlimited on purpose: `{retryAfterMs}` redeliveries are not
// failures and must not be cut off, and the server would drop a message silently (an advisory only)
// if the delivery that should dead-letter it were lost; this code counts and dead-letters instead.
//
// Publishing: JetStream publish with msgID = the message id, so a re-send within the stream's
// duplicate window is stored once. Note that NATS acknowledges a publish before the message is on
// disk: a publisher feeding the bus from a source of truth re-sends after the server was lost (see
// `generation()` and workers/event-forwarder.ts).
//
// Connection: reconnects for ever; durable consumers resume where they were (their state lives in
// the stream's store). `healthy()` is true only while connected and JetStream answers.
import {
  connect, headers, nanos,
  type MsgHdrs, type NatsConnection,
} from '@nats-io/transport-node';
import {
  AckPolicy, DeliverPolicy, DiscardPolicy, JetStreamApiCodes, JetStreamApiError, ReplayPolicy, RetentionPolicy, StorageType,
  jetstream, jetstreamManager,
  type ConsumerConfig, type ConsumerInfo, type ConsumerMessages, type Consumer as JsConsumer, type JetStreamClient, type JetStreamManager,
  type JsMsg, type StreamConfig,
} from '@nats-io/jetstream';
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import {
  DEFAULT_MAX_DELIVER, defaultBackoffMs, subjectMatches,
  type Bus, type BusMessage, type Consumer, type ConsumerLag, type ConsumerOptions, type DeadLetterInfo, type HandlerOutcome,
} from './types.ts';

export interface NatsBusOptions {
  /** nats://host:port, several separated by commas. */
  url: string;
  /** Prefix of every stream, subject and consumer name (NATS_PREFIX). */
  prefix?: string;
  /** How long the server waits for an outcome before redelivering (extended while a handler runs). */
  ackWaitMs?: number;
  /** JetStream's msgID dedupe window. */
  duplicateWindowMs?: number;
  /** How long the stream keeps messages. */
  maxAgeMs?: number;
  /** Unacknowledged messages (in flight or waiting for a delayed redelivery) per durable consumer. */
  maxAckPending?: number;
  replicas?: number;
  publishTimeoutMs?: number;
  /** How long one pull waits for a message before it is renewed. */
  pullExpiresMs?: number;
  log?: Logger;
  /** Connection name shown by the server. */
  connectionName?: string;
}

const HDR_ID = 'Bus-Id';
const HDR_DL_DURABLE = 'Bus-Dead-Letter-Durable';
const HDR_DL_SUBJECT = 'Bus-Dead-Letter-Subject';
const HDR_DL_ERROR = 'Bus-Dead-Letter-Error';
const HDR_DL_DELIVERIES = 'Bus-Dead-Letter-Deliveries';
const NAME = /^[A-Za-z0-9_-]+$/;
/** JetStream API error: "stream name already in use" (created meanwhile by another process). */
const STREAM_NAME_IN_USE = 10058;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms); }),
  ]).finally(() => clearTimeout(timer));
}

function isNotFound(err: unknown): boolean {
  if (err instanceof JetStreamApiError) {
    return err.code === JetStreamApiCodes.ConsumerNotFound || err.code === JetStreamApiCodes.StreamNotFound;
  }
  return err instanceof Error && /(consumer|stream) not found/i.test(err.message);
}

/** A header value: one line, bounded. */
function headerValue(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').slice(0, 2000);
}

/** True when the server is at least major.minor. */
function serverAtLeast(version: string | undefined, major: number, minor: number): boolean {
  const m = /^v?(\d+)\.(\d+)/.exec(version ?? '');
  if (!m) return false;
  const [maj, min] = [Number(m[1]), Number(m[2])];
  return maj > major || (maj === major && min >= minor);
}

/** One consumer on the server: its name and filter subjects (without the prefix). */
export interface ServerConsumer {
  name: string;
  subjects: string[];
}

export class NatsBus implements Bus {
  readonly name = 'nats';
  readonly prefix: string;
  readonly streamName: string;
  readonly ackWaitMs: number;
  private readonly duplicateWindowMs: number;
  private readonly maxAgeMs: number;
  private readonly maxAckPending: number;
  private readonly replicas: number;
  readonly publishTimeoutMs: number;
  readonly pullExpiresMs: number;
  readonly log: Logger | undefined;
  private readonly consumers = new Set<NatsConsumer>();
  private connected = true;
  private lost = 0;
  private closing: Promise<void> | undefined;

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    opts: NatsBusOptions,
  ) {
    this.prefix = opts.prefix ?? 'payments';
    this.streamName = `${this.prefix}_bus`;
    this.ackWaitMs = opts.ackWaitMs ?? 30_000;
    this.duplicateWindowMs = opts.duplicateWindowMs ?? 120_000;
    this.maxAgeMs = opts.maxAgeMs ?? 7 * 24 * 3600_000;
    this.maxAckPending = opts.maxAckPending ?? 10_000;
    this.replicas = opts.replicas ?? 1;
    this.publishTimeoutMs = opts.publishTimeoutMs ?? 5_000;
    this.pullExpiresMs = Math.max(1_000, opts.pullExpiresMs ?? 10_000);
    this.log = opts.log;
  }

  /** Connects and makes sure the stream exists with the configuration asked for. */
  static async connect(opts: NatsBusOptions): Promise<NatsBus> {
    const prefix = opts.prefix ?? 'payments';
    if (!NAME.test(prefix)) throw new Error(`NATS prefix "${prefix}" must be letters, digits, "_" or "-"`);
    const nc = await connect({
      servers: opts.url.split(',').map((s) => s.trim()).filter(Boolean),
      name: opts.connectionName ?? `${prefix}-merchant-payments`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      // A server that stops answering (rather than closing the socket) is noticed within ~30 s.
      pingInterval: 10_000,
      maxPingOut: 3,
      // Every publish is a request; with async traces on, each builds a RequestError and a
      // TimeoutError just to hold a stack (3% of the service's CPU under load, bench/PROFILE.md).
      // Errors still say what failed; only the caller's stack is not captured ahead of time.
      noAsyncTraces: true,
    });
    try {
      const jsm = await jetstreamManager(nc, { timeout: 10_000 });
      const bus = new NatsBus(nc, jetstream(nc, { timeout: 10_000 }), jsm, { ...opts, prefix });
      bus.watchStatus();
      await bus.ensureStream();
      return bus;
    } catch (err) {
      await nc.close();
      throw err;
    }
  }

  subject(subject: string): string {
    return `${this.prefix}.${subject}`;
  }

  durableName(durable: string): string {
    if (!NAME.test(durable)) throw new Error(`durable name "${durable}" must be letters, digits, "_" or "-"`);
    return `${this.prefix}_${durable}`;
  }

  deadLetterSubject(durable: string): string {
    return `dlq.${durable}`;
  }

  generation(): number {
    return this.lost;
  }

  private watchStatus(): void {
    void (async () => {
      for await (const s of this.nc.status()) {
        if (s.type === 'disconnect') {
          // Counted on the disconnect, not the reconnect: what was published before it may be
          // lost with the server, and a publisher must know that before the server is back.
          this.connected = false;
          this.lost++;
          this.log?.warn({ server: s.server }, 'NATS connection lost; reconnecting');
        } else if (s.type === 'reconnect') {
          this.connected = true;
          this.log?.info({ server: s.server }, 'NATS reconnected');
          // A server restarted without its store has neither the stream nor the consumers.
          void this.ensureAll().catch((err) => this.log?.error({ err }, 'NATS stream or consumer check failed after reconnect'));
        }
      }
    })().catch(() => undefined);
  }

  private async ensureAll(): Promise<void> {
    await this.ensureStream();
    for (const c of this.consumers) await c.ensure();
  }

  private streamConfig(): StreamConfig {
    return {
      name: this.streamName,
      description: `merchant payments bus (prefix ${this.prefix})`,
      subjects: [`${this.prefix}.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: nanos(this.maxAgeMs),
      duplicate_window: nanos(this.duplicateWindowMs),
      num_replicas: this.replicas,
    } as StreamConfig;
  }

  /** Creates the stream, or updates what changed in its configuration. */
  async ensureStream(): Promise<void> {
    const want = this.streamConfig();
    let info;
    try {
      info = await this.jsm.streams.info(this.streamName);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await this.jsm.streams.add(want);
        return;
      } catch (addErr) {
        // Another process created it meanwhile.
        if (!(addErr instanceof JetStreamApiError && addErr.code === STREAM_NAME_IN_USE)) throw addErr;
        info = await this.jsm.streams.info(this.streamName);
      }
    }
    const have = info.config;
    if (have.retention !== want.retention || have.storage !== want.storage) {
      throw new Error(`NATS stream ${this.streamName} exists with retention ${have.retention} and storage ${have.storage}; `
        + `expected ${want.retention} and ${want.storage}, which cannot be changed in place`);
    }
    const changed = JSON.stringify(have.subjects ?? []) !== JSON.stringify(want.subjects)
      || have.max_age !== want.max_age
      || have.duplicate_window !== want.duplicate_window
      || have.discard !== want.discard
      || have.num_replicas !== want.num_replicas
      || have.description !== want.description;
    if (changed) {
      this.log?.info({ stream: this.streamName }, 'updating NATS stream configuration');
      await this.jsm.streams.update(this.streamName, {
        subjects: want.subjects, max_age: want.max_age, duplicate_window: want.duplicate_window,
        discard: want.discard, num_replicas: want.num_replicas, description: want.description,
      });
    }
  }

  /** Whether the server takes several filter subjects on one consumer (NATS 2.10 and later). */
  private multiFilter(): boolean {
    return serverAtLeast(this.nc.info?.version, 2, 10);
  }

  /**
   * The server-side consumers of one durable: one with every subject as its filters, or, on a
   * server before 2.10 (one filter per consumer), one per subject, named `<durable>__<hash>`.
   * One consumer with a filter covering all the subjects would do too, but it receives, and must
   * acknowledge, every message under the covering filter: a worker that wants three event types
   * of fifty would take (a pull, a delivery and an ack for) every event.
   */
  layout(durable: string, subjects: string[]): ServerConsumer[] {
    const base = this.durableName(durable);
    const unique = [...new Set(subjects)].sort();
    if (unique.length === 0) throw new Error(`consumer ${durable} has no subjects`);
    if (unique.length === 1 || this.multiFilter()) return [{ name: base, subjects: unique }];
    return unique.map((s) => ({ name: `${base}__${createHash('sha256').update(s).digest('hex').slice(0, 12)}`, subjects: [s] }));
  }

  /**
   * This durable's server consumers of another layout (the server was upgraded, or the subjects
   * changed): `<durable>` and `<durable>__*` not in `current`.
   */
  private async predecessors(durable: string, current: ServerConsumer[]): Promise<ConsumerInfo[]> {
    const base = this.durableName(durable);
    const keep = new Set(current.map((c) => c.name));
    const out: ConsumerInfo[] = [];
    for await (const info of this.jsm.consumers.list(this.streamName)) {
      const name = info.name;
      if (!keep.has(name) && (name === base || name.startsWith(`${base}__`))) out.push(info);
    }
    return out;
  }

  /**
   * Creates the server consumer, or updates what changed in its configuration. A new one starts
   * after `startAfter` (a stream sequence) when given, else from the oldest message the stream keeps.
   */
  async ensureConsumer(durable: string, sc: ServerConsumer, startAfter?: number): Promise<string> {
    const full = sc.subjects.map((s) => this.subject(s));
    const filter: Pick<ConsumerConfig, 'filter_subject' | 'filter_subjects'> = full.length === 1
      ? { filter_subject: full[0]!, filter_subjects: undefined }
      : { filter_subject: undefined, filter_subjects: full };
    const updatable = {
      description: `merchant payments consumer ${durable}`,
      ack_wait: nanos(this.ackWaitMs),
      max_deliver: -1,
      max_ack_pending: this.maxAckPending,
      ...filter,
    };
    let info;
    try {
      info = await this.jsm.consumers.info(this.streamName, sc.name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      // A new durable starts from the oldest message the stream keeps, so a worker deployed together
      // with the forwarder misses nothing that was published before its consumer existed; one that
      // replaces another layout starts where that one's acknowledgements stopped.
      const cfg: Partial<ConsumerConfig> = {
        durable_name: sc.name,
        ack_policy: AckPolicy.Explicit,
        ...(startAfter === undefined
          ? { deliver_policy: DeliverPolicy.All }
          : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: startAfter + 1 }),
        replay_policy: ReplayPolicy.Instant,
        ...updatable,
      };
      await this.jsm.consumers.add(this.streamName, cfg);
      return sc.name;
    }
    const have = info.config;
    const sameFilter = (have.filter_subject ?? '') === (filter.filter_subject ?? '')
      && JSON.stringify([...(have.filter_subjects ?? [])].sort()) === JSON.stringify(filter.filter_subjects ?? []);
    const changed = !sameFilter
      || have.ack_wait !== updatable.ack_wait
      || have.max_deliver !== updatable.max_deliver
      || have.max_ack_pending !== updatable.max_ack_pending
      || have.description !== updatable.description
      || (have.backoff?.length ?? 0) > 0;
    if (changed) {
      this.log?.info({ consumer: sc.name }, 'updating NATS consumer configuration');
      // `backoff` is cleared: it would replace ack_wait for redeliveries; delays are chosen in code.
      await this.jsm.consumers.update(this.streamName, sc.name, { ...updatable, backoff: undefined });
    }
    return sc.name;
  }

  async publish(subject: string, id: string, data: unknown): Promise<void> {
    if (this.closing) throw new Error('bus closed');
    const h = headers();
    h.set(HDR_ID, id);
    await this.js.publish(this.subject(subject), JSON.stringify(data ?? null), {
      msgID: id, headers: h, timeout: this.publishTimeoutMs,
    });
  }

  /** Publishes a message that exhausted its deliveries to the durable's dead-letter subject. */
  async publishDeadLetter(durable: string, msg: BusMessage, payload: Uint8Array, error: string): Promise<void> {
    const h: MsgHdrs = headers();
    h.set(HDR_ID, msg.id);
    h.set(HDR_DL_DURABLE, durable);
    h.set(HDR_DL_SUBJECT, msg.subject);
    h.set(HDR_DL_ERROR, headerValue(error));
    h.set(HDR_DL_DELIVERIES, String(msg.deliveryCount));
    await this.js.publish(this.subject(this.deadLetterSubject(durable)), payload, {
      // Dead-lettered twice (the term lost, the message failed again) is stored once.
      msgID: `dlq:${durable}:${msg.id}`, headers: h, timeout: this.publishTimeoutMs,
    });
  }

  /** Reads a stored message back into the bus's terms (subject without the prefix). */
  toBusMessage(m: JsMsg): { msg: BusMessage; payload: Uint8Array; parseError?: string } {
    const subject = m.subject.startsWith(`${this.prefix}.`) ? m.subject.slice(this.prefix.length + 1) : m.subject;
    const h = m.headers;
    const id = h?.get(HDR_ID) || h?.get('Nats-Msg-Id') || `${m.info.stream}:${m.seq}`;
    let data: unknown;
    let parseError: string | undefined;
    try {
      data = m.data.length === 0 ? null : m.json();
    } catch (err) {
      parseError = `payload is not JSON: ${String(err)}`;
    }
    const msg: BusMessage = { id, subject, data, deliveryCount: m.info.deliveryCount };
    const durable = h?.get(HDR_DL_DURABLE);
    if (durable) {
      const dl: DeadLetterInfo = {
        durable,
        subject: h!.get(HDR_DL_SUBJECT),
        error: h!.get(HDR_DL_ERROR),
        deliveryCount: Number(h!.get(HDR_DL_DELIVERIES)) || 0,
      };
      msg.deadLetter = dl;
    }
    return { msg, payload: m.data, ...(parseError ? { parseError } : {}) };
  }

  async consume(opts: ConsumerOptions): Promise<Consumer> {
    if (this.closing) throw new Error('bus closed');
    const concurrency = opts.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('concurrency must be a whole number ≥ 1');
    const layout = this.layout(opts.durable, opts.subjects);
    const previous = await this.predecessors(opts.durable, layout);
    // Where the previous layout's acknowledgements stopped (its lowest floor): what it delivered
    // and was not acknowledged is delivered again by the new one (at least once).
    const startAfter = previous.length === 0 ? undefined : Math.min(...previous.map((p) => p.ack_floor.stream_seq));
    const parts: NatsConsumer[] = [];
    for (const sc of layout) {
      await this.ensureConsumer(opts.durable, sc, startAfter);
      // On servers before 2.10, each subject's consumer has the whole `concurrency`.
      parts.push(new NatsConsumer(this, { ...opts, subjects: sc.subjects }, sc.name, concurrency));
    }
    for (const p of previous) {
      // Removed once nobody pulls from it (a process of the previous version may still run).
      if (p.num_waiting > 0) continue;
      await this.jsm.consumers.delete(this.streamName, p.name)
        .then(() => this.log?.info({ consumer: p.name }, 'removed the NATS consumer of the previous layout'))
        .catch((err) => this.log?.warn({ err, consumer: p.name }, 'could not remove the NATS consumer of the previous layout'));
    }
    for (const c of parts) {
      this.consumers.add(c);
      c.start();
    }
    const consumer = {
      stop: async () => { await Promise.all(parts.map((c) => c.stop())); },
      /** Pull requests sent so far, for tests. */
      get pulls() { return parts.reduce((n, c) => n + c.pulls, 0); },
    };
    return consumer;
  }

  forget(c: NatsConsumer): void {
    this.consumers.delete(c);
  }

  async healthy(): Promise<boolean> {
    if (this.closing || this.nc.isClosed() || this.nc.isDraining() || !this.connected) return false;
    try {
      await withTimeout(this.jsm.streams.info(this.streamName), 2_000);
      return true;
    } catch {
      return false;
    }
  }

  /** The server's count of each of this process's durables: not yet delivered + delivered and not acknowledged. */
  async consumerLag(): Promise<ConsumerLag[]> {
    const byDurable = new Map<string, number>();
    const unreachable = new Set<string>();
    for (const c of this.consumers) {
      try {
        const info = await withTimeout(this.jsm.consumers.info(this.streamName, c.name), 2_000);
        byDurable.set(c.durable, (byDurable.get(c.durable) ?? 0) + info.num_pending + info.num_ack_pending);
      } catch {
        unreachable.add(c.durable);
      }
    }
    // Not reachable now: the series is left out of this scrape rather than reported too low.
    return [...byDurable].filter(([d]) => !unreachable.has(d)).map(([durable, pending]) => ({ durable, pending }));
  }

  /** Stops the consumers (in-flight handlers finish), then drains the connection. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([...this.consumers].map((c) => c.stop()));
      if (!this.nc.isClosed()) {
        try {
          await withTimeout(this.nc.drain(), 10_000);
        } catch {
          await this.nc.close().catch(() => undefined);
        }
      }
    })();
    return this.closing;
  }
}

class NatsConsumer implements Consumer {
  private stopped = false;
  /** Pull requests sent so far (a pull may bring several messages). */
  pulls = 0;
  private pulling: Promise<void> | undefined;
  private readonly fetches = new Set<ConsumerMessages>();
  /** Handlers running now (each on a message taken by the pull loop); never more than `concurrency`. */
  private readonly running = new Set<Promise<void>>();
  private slotFreed: (() => void) | undefined;
  private handle: JsConsumer | undefined;
  private wakeStop!: () => void;
  private readonly stopSignal = new Promise<void>((r) => (this.wakeStop = r));
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly bus: NatsBus,
    private readonly opts: ConsumerOptions,
    readonly name: string,
    private readonly concurrency: number,
  ) {}

  get durable(): string {
    return this.opts.durable;
  }

  start(): void {
    this.pulling = this.loop();
  }

  async ensure(): Promise<void> {
    await this.bus.ensureConsumer(this.opts.durable, { name: this.name, subjects: this.opts.subjects });
    this.handle = undefined;
  }

  private async consumer(): Promise<JsConsumer> {
    this.handle ??= await this.bus.js.consumers.get(this.bus.streamName, this.name);
    return this.handle;
  }

  /** Resolves once a handler slot is free (or the consumer stops). */
  private async freeSlot(): Promise<void> {
    while (!this.stopped && this.running.size >= this.concurrency) {
      await Promise.race([new Promise<void>((r) => (this.slotFreed = r)), this.stopSignal]);
    }
  }

  /**
   * One pull loop per consumer. Each pull asks for as many messages as there are free handler
   * slots, and every message is handed to a handler the moment it arrives: a message is only taken
   * when it can be handled now (nothing waits in a client buffer while its ack wait runs out), and
   * under load one pull request brings several messages instead of one each (every request is a
   * round trip to the server and a socket write).
   */
  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        await this.freeSlot();
        if (this.stopped) break;
        const consumer = await this.consumer();
        this.pulls++;
        const messages = await consumer.fetch({ max_messages: this.concurrency - this.running.size, expires: this.bus.pullExpiresMs });
        this.fetches.add(messages);
        try {
          for await (const m of messages) {
            if (this.stopped) m.nak(); // taken while stopping: straight back to the server
            else this.dispatch(m);
          }
        } finally {
          this.fetches.delete(messages);
        }
        failures = 0;
      } catch (err) {
        if (this.stopped) break;
        failures++;
        this.bus.log?.warn({ err, consumer: this.name }, 'NATS pull failed; retrying');
        if (isNotFound(err)) {
          await this.ensure().catch((e) => this.bus.log?.error({ err: e, consumer: this.name }, 'NATS consumer re-creation failed'));
        }
        this.handle = undefined;
        await Promise.race([sleep(Math.min(5_000, 100 * 2 ** Math.min(failures, 6))), this.stopSignal]);
      }
    }
  }

  private dispatch(m: JsMsg): void {
    const handled: Promise<void> = this.deliver(m)
      .catch((err) => this.bus.log?.error({ err, consumer: this.name }, 'NATS delivery failed'))
      .finally(() => {
        this.running.delete(handled);
        const wake = this.slotFreed;
        this.slotFreed = undefined;
        wake?.();
      });
    this.running.add(handled);
  }

  private async deliver(m: JsMsg): Promise<void> {
    const { msg, payload, parseError } = this.bus.toBusMessage(m);
    if (!this.opts.subjects.some((p) => subjectMatches(p, msg.subject))) {
      m.ack(); // only on servers without multi-subject filters: not one of this consumer's subjects
      return;
    }
    const max = this.opts.maxDeliver ?? DEFAULT_MAX_DELIVER;
    if (parseError !== undefined) {
      await this.deadLetter(m, msg, payload, parseError);
      return;
    }
    const every = Math.max(250, Math.floor(this.bus.ackWaitMs / 3));
    const keepAlive = setInterval(() => {
      try {
        m.working();
      } catch { /* disconnected: the server redelivers after the ack wait */ }
    }, every);
    let outcome: HandlerOutcome = undefined;
    let failure: { error: unknown } | undefined;
    try {
      outcome = await this.opts.handler(msg);
    } catch (error) {
      failure = { error };
    } finally {
      clearInterval(keepAlive);
    }
    try {
      if (!failure) {
        if (outcome && typeof outcome.retryAfterMs === 'number') m.nak(Math.max(0, Math.round(outcome.retryAfterMs)));
        else m.ack();
      } else if (msg.deliveryCount >= max) {
        await this.deadLetter(m, msg, payload, String(failure.error));
      } else {
        m.nak(Math.max(0, Math.round((this.opts.backoffMs ?? defaultBackoffMs)(msg.deliveryCount))));
      }
    } catch (err) {
      // The connection dropped: without an outcome the server redelivers after the ack wait.
      this.bus.log?.warn({ err, consumer: this.name }, 'NATS ack failed');
    }
  }

  private async deadLetter(m: JsMsg, msg: BusMessage, payload: Uint8Array, error: string): Promise<void> {
    try {
      await this.bus.publishDeadLetter(this.opts.durable, msg, payload, error);
      m.term();
      this.bus.log?.error({ consumer: this.name, id: msg.id, subject: msg.subject, error }, 'message dead-lettered');
    } catch (err) {
      // Not dead-lettered yet: try again on a later delivery.
      this.bus.log?.error({ err, consumer: this.name, id: msg.id }, 'dead-letter publish failed; will retry');
      m.nak(Math.max(0, Math.round((this.opts.backoffMs ?? defaultBackoffMs)(msg.deliveryCount))));
    }
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      this.wakeStop();
      await Promise.all([...this.fetches].map((f) => f.close().catch(() => undefined)));
      await this.pulling;
      await Promise.all(this.running); // in-flight handlers finish and settle their messages
      this.bus.forget(this);
    })();
    return this.stopping;
  }
}
