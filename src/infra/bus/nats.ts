// The bus on NATS JetStream (@nats-io/transport-node + @nats-io/jetstream v3).
//
// Names: with prefix P (NATS_PREFIX, default `payments`) every subject is `P.<subject>`, the one
// stream is `P_bus` (subjects `P.>`) and a durable consumer D is `P_D`, so several deployments share
// one NATS without seeing each other. The stream and the durable consumers are created at start
// when missing, and updated in place when their configuration changed (subjects, ack wait, limits).
//
// Delivery: pull consumers, explicit acks. Each consumer runs `concurrency` loops that pull one
// message at a time, so nothing waits in a client buffer while its ack wait runs out, and several
// processes using the same durable share its messages. While a handler runs, the message's ack
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
  type ConsumerConfig, type ConsumerMessages, type Consumer as JsConsumer, type JetStreamClient, type JetStreamManager,
  type JsMsg, type StreamConfig,
} from '@nats-io/jetstream';
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

/**
 * The narrowest single filter that covers every subject: their common leading literal tokens
 * followed by `>` (at least one token shorter than the shortest subject, since `>` needs one).
 * For servers older than 2.10, which take one filter subject per consumer; the client then keeps
 * only the messages that match one of the subjects.
 */
export function coveringSubject(subjects: string[]): string {
  const split = subjects.map((s) => s.split('.'));
  const max = Math.min(...split.map((t) => t.length)) - 1;
  const common: string[] = [];
  for (let i = 0; i < max; i++) {
    const token = split[0]![i]!;
    if (token === '*' || token === '>' || !split.every((t) => t[i] === token)) break;
    common.push(token);
  }
  return [...common, '>'].join('.');
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

  private filterFor(subjects: string[]): Pick<ConsumerConfig, 'filter_subject' | 'filter_subjects'> {
    const full = [...new Set(subjects.map((s) => this.subject(s)))].sort();
    if (full.length === 1) return { filter_subject: full[0]!, filter_subjects: undefined };
    if (serverAtLeast(this.nc.info?.version, 2, 10)) return { filter_subject: undefined, filter_subjects: full };
    return { filter_subject: coveringSubject(full), filter_subjects: undefined };
  }

  /** Creates the durable consumer, or updates what changed in its configuration. */
  async ensureConsumer(opts: ConsumerOptions): Promise<string> {
    const name = this.durableName(opts.durable);
    if (opts.subjects.length === 0) throw new Error(`consumer ${opts.durable} has no subjects`);
    const filter = this.filterFor(opts.subjects);
    const updatable = {
      description: `merchant payments consumer ${opts.durable}`,
      ack_wait: nanos(this.ackWaitMs),
      max_deliver: -1,
      max_ack_pending: this.maxAckPending,
      ...filter,
    };
    let info;
    try {
      info = await this.jsm.consumers.info(this.streamName, name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      // A new durable starts from the oldest message the stream keeps, so a worker deployed together
      // with the forwarder misses nothing that was published before its consumer existed.
      const cfg: Partial<ConsumerConfig> = {
        durable_name: name,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        replay_policy: ReplayPolicy.Instant,
        ...updatable,
      };
      await this.jsm.consumers.add(this.streamName, cfg);
      return name;
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
      this.log?.info({ consumer: name }, 'updating NATS consumer configuration');
      // `backoff` is cleared: it would replace ack_wait for redeliveries; delays are chosen in code.
      await this.jsm.consumers.update(this.streamName, name, { ...updatable, backoff: undefined });
    }
    return name;
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
    const name = await this.ensureConsumer(opts);
    const c = new NatsConsumer(this, opts, name, concurrency);
    this.consumers.add(c);
    c.start();
    return c;
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
    const durables = [...new Set([...this.consumers].map((c) => c.durable))];
    const out: ConsumerLag[] = [];
    for (const durable of durables) {
      try {
        const info = await withTimeout(this.jsm.consumers.info(this.streamName, this.durableName(durable)), 2_000);
        out.push({ durable, pending: info.num_pending + info.num_ack_pending });
      } catch {
        // Not reachable now: the series is left out of this scrape rather than reported as 0.
      }
    }
    return out;
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
  private loops: Array<Promise<void>> = [];
  private readonly fetches = new Set<ConsumerMessages>();
  private handle: JsConsumer | undefined;
  private wakeStop!: () => void;
  private readonly stopSignal = new Promise<void>((r) => (this.wakeStop = r));
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly bus: NatsBus,
    private readonly opts: ConsumerOptions,
    private readonly name: string,
    private readonly concurrency: number,
  ) {}

  get durable(): string {
    return this.opts.durable;
  }

  start(): void {
    for (let i = 0; i < this.concurrency; i++) this.loops.push(this.loop());
  }

  async ensure(): Promise<void> {
    await this.bus.ensureConsumer(this.opts);
    this.handle = undefined;
  }

  private async consumer(): Promise<JsConsumer> {
    this.handle ??= await this.bus.js.consumers.get(this.bus.streamName, this.name);
    return this.handle;
  }

  /** One pull at a time: a message is only taken when this loop can handle it now. */
  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        const consumer = await this.consumer();
        const messages = await consumer.fetch({ max_messages: 1, expires: this.bus.pullExpiresMs });
        this.fetches.add(messages);
        try {
          for await (const m of messages) {
            if (this.stopped) m.nak(); // taken while stopping: straight back to the server
            else await this.deliver(m);
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
      await Promise.all(this.loops);
      this.bus.forget(this);
    })();
    return this.stopping;
  }
}
