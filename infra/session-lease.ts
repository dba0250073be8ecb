// A lease one process holds at a time among every process on one database: a session-level
// advisory lock on a connection of its own. PostgreSQL releases it when that session ends, so a
// holder that crashes, is killed or loses its connection frees it at once (a socket closed) or
// within about half a minute (a peer gone silent: the session's TCP keepalives, set below, replace
// the server's default of two hours). The holder learns of a loss from its connection's end.
//
// What it is for: work every process could do but one should (the event forwarder: a forwarder per
// worker process read and published every event once per process). It is never a guarantee
// against two holders for a moment (the old holder learns of its loss after the new one took the
// lease), so what runs under it must stay safe to run twice, as everything fed by the bus is.
import pg from 'pg';

/** Keepalive settings for the lease's session, in seconds: a silent peer is noticed in about 25 s. */
const KEEPALIVES = { idle: 10, interval: 5, count: 3 };

/** How the lease's sessions show in pg_stat_activity. */
export const LEASE_APPLICATION_NAME = 'merchant-payments-lease';

export interface Lease {
  /** Resolves when the lease is lost (its connection ended) or released. */
  readonly lost: Promise<void>;
  release(): Promise<void>;
}

/**
 * One process's session for the lease named by `key`: a connection opened on the first try and kept
 * while the lease is held by another (a process waiting asks again on it, rather than opening a
 * connection per try), re-opened on the next try after it is lost.
 */
export class LeaseSession {
  private client: pg.Client | undefined;
  private signalLost: (() => void) | undefined;

  constructor(private readonly url: string, private readonly key: number) {}

  /** The lease if no other session holds it, else undefined; throws when the database cannot be reached. */
  async tryTake(): Promise<Lease | undefined> {
    const client = this.client ?? await this.connect();
    const r = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1) AS taken', [this.key]);
    if (!r.rows[0]!.taken) return undefined;
    const lost = new Promise<void>((resolve) => (this.signalLost = resolve));
    // Ending the session releases the lock: no unlock statement that could wait on a dead connection.
    return { lost, release: () => this.close() };
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url, keepAlive: true, application_name: LEASE_APPLICATION_NAME });
    const gone = () => {
      if (this.client === client) this.dropped();
      client.end().catch(() => undefined);
    };
    client.on('error', gone);
    client.on('end', gone);
    try {
      await client.connect();
      await client.query(`SET tcp_keepalives_idle = ${KEEPALIVES.idle}; SET tcp_keepalives_interval = ${KEEPALIVES.interval};
        SET tcp_keepalives_count = ${KEEPALIVES.count}`);
    } catch (err) {
      gone();
      throw err;
    }
    this.client = client;
    return client;
  }

  private dropped(): void {
    this.client = undefined;
    this.signalLost?.();
    this.signalLost = undefined;
  }

  /** Ends the session: the lease, if held, is released. */
  async close(): Promise<void> {
    const client = this.client;
    this.dropped();
    await client?.end().catch(() => undefined);
  }
}
