// A lease one process holds at a time among every process on one database: a session-level
// advisory lock on a connection of its own. PostgreSQL releases it when that session ends, so a
// holder that crashes, is killed or loses its connection frees it at once (a socket closed) or
// within about 25 s (a peer gone silent: the session's TCP keepalives, set below, replace the
// server's default of two hours).
//
// The holder must learn of a loss before the server gives the lease to another: a connection lost
// silently never ends on the holder's side (its socket only notices when it next writes), so the
// holder asks its session something every few seconds and counts the lease lost when an answer
// takes longer than its reply time-out: within 15 s, before the server's 25.
//
// What it is for: work every process could do but one should (the event forwarder: a forwarder per
// worker process read and published every event once per process). It is never a guarantee
// against two holders for a moment, so what runs under it must stay safe to run twice, as
// everything fed by the bus is.
//
// It needs a session of its own on PostgreSQL itself: a pooler in transaction mode (PgBouncer)
// would hand the lock's session to others.
import pg from 'pg';

/** Keepalive settings for the lease's session on the server (s; ms): a silent peer is dropped in about 25 s. */
const KEEPALIVES = { idle: 10, interval: 5, count: 3, userTimeoutMs: 25_000 };

/** How the lease's sessions show in pg_stat_activity. */
export const LEASE_APPLICATION_NAME = 'merchant-payments-lease';

export interface LeaseTimings {
  /** How often the holder checks its session. */
  heartbeatMs: number;
  /** Connecting, or an answer of the session, taking longer than this counts it lost. */
  replyTimeoutMs: number;
}

const TIMINGS: LeaseTimings = { heartbeatMs: 5_000, replyTimeoutMs: 10_000 };

export interface Lease {
  /** Resolves when the lease is lost (its session ended or stopped answering) or released. */
  readonly lost: Promise<void>;
  release(): Promise<void>;
}

/**
 * One process's session for the lease named by `key`: a connection opened on the first try and kept
 * while the lease is held by another (a process waiting asks again on it, rather than opening a
 * connection per try), dropped on any failure and opened again by the next try.
 */
export class LeaseSession {
  private client: pg.Client | undefined;
  private signalLost: (() => void) | undefined;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(private readonly url: string, private readonly key: number, private readonly timings = TIMINGS) {}

  /** The lease if no other session holds it, else undefined; throws when the database cannot be reached. */
  async tryTake(): Promise<Lease | undefined> {
    try {
      const client = this.client ?? await this.connect();
      const r = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1) AS taken', [this.key]);
      if (!r.rows[0]!.taken) return undefined;
      const lost = new Promise<void>((resolve) => (this.signalLost = resolve));
      this.heartbeat = setInterval(() => void this.check(client), this.timings.heartbeatMs);
      this.heartbeat.unref();
      // Ending the session releases the lock: no unlock statement that could wait on a dead connection.
      return { lost, release: () => this.close() };
    } catch (err) {
      void this.close();
      throw err;
    }
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.url, application_name: LEASE_APPLICATION_NAME, keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVES.idle * 1000, connectionTimeoutMillis: this.timings.replyTimeoutMs,
      query_timeout: this.timings.replyTimeoutMs,
    });
    const gone = () => {
      if (this.client === client) void this.close();
    };
    client.on('error', gone);
    client.on('end', gone);
    this.client = client;
    // A session closed while connecting (stop() ends it) leaves pg's connect() unsettled: end the wait too.
    await new Promise<void>((resolve, reject) => {
      const closed = () => reject(new Error('lease session closed while connecting'));
      client.once('end', closed);
      client.connect().then(() => { client.off('end', closed); resolve(); }, reject);
    });
    // tcp_user_timeout: a reply the holder never acknowledges (its host gone mid-answer) holds no
    // keepalive probe back for the kernel's 15 minutes of retransmissions.
    await client.query(`SET tcp_keepalives_idle = ${KEEPALIVES.idle}; SET tcp_keepalives_interval = ${KEEPALIVES.interval};
      SET tcp_keepalives_count = ${KEEPALIVES.count}; SET tcp_user_timeout = ${KEEPALIVES.userTimeoutMs}`);
    return client;
  }

  /** The holder's heartbeat: a session that does not answer in time is given up. */
  private async check(client: pg.Client): Promise<void> {
    try {
      await client.query('SELECT 1');
    } catch {
      if (this.client === client) await this.close();
    }
  }

  /** Ends the session (the lease, if held, is released) and tells the holder. */
  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    clearInterval(this.heartbeat);
    this.signalLost?.();
    this.signalLost = undefined;
    if (!client) return;
    // end() drops a socket with a query hanging on it; one gone silent may never answer its goodbye:
    // after the reply time-out the socket is dropped (the server ends its side by its keepalives).
    const ended = client.end().then(() => true, () => true);
    const timedOut = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), this.timings.replyTimeoutMs).unref());
    if (!(await Promise.race([ended, timedOut]))) (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  }
}
