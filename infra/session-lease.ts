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

export interface Lease {
  /** Resolves when the lease is lost (its connection ended) or released. */
  readonly lost: Promise<void>;
  release(): Promise<void>;
}

/**
 * Takes the lease named by `key` if no other session holds it. Undefined when another holds it;
 * throws when the database cannot be reached.
 */
export async function tryTakeLease(url: string, key: number): Promise<Lease | undefined> {
  const client = new pg.Client({ connectionString: url, keepAlive: true });
  let signalLost!: () => void;
  const lost = new Promise<void>((resolve) => (signalLost = resolve));
  const end = () => {
    signalLost();
    return client.end().catch(() => undefined);
  };
  client.on('error', () => void end());
  client.on('end', () => signalLost());
  try {
    await client.connect();
    await client.query(`SET tcp_keepalives_idle = ${KEEPALIVES.idle}; SET tcp_keepalives_interval = ${KEEPALIVES.interval};
      SET tcp_keepalives_count = ${KEEPALIVES.count}`);
    const r = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1) AS taken', [key]);
    if (!r.rows[0]!.taken) {
      await end();
      return undefined;
    }
  } catch (err) {
    await end();
    throw err;
  }
  // Ending the session releases the lock: no unlock statement that could wait on a dead connection.
  return { lost, release: async () => { await end(); } };
}
