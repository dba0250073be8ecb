// Concurrent appenders for the append scenario: `writers` loops appending one event at a time for
// `seconds`, each to streams of its own (distinct) or all to one stream (hot: they race on the
// expected version; a conflict re-reads the version and tries again). Counts appended events and
// conflicts; a store is an adapter with one `append` (ours, Emmett's, …).

export type Mode = 'distinct' | 'hot';

export interface Appender {
  /** Appends one event at `expected` (0 = new stream); answers the new version, or 'conflict'. */
  append(stream: string, expected: number, event: { type: string; data: Record<string, unknown> }): Promise<number | 'conflict'>;
  /** The stream's current version (after a conflict). */
  version(stream: string, known: number): Promise<number>;
}

export interface WriteResult {
  events: number;
  conflicts: number;
  ms: number;
  eventsPerSecond: number;
}

/** A payment-like event body (~300 bytes of JSON). */
export function sampleEvent(i: number): { type: string; data: Record<string, unknown> } {
  return {
    type: 'payin.created',
    data: {
      payin_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, merchant_id: 'b0d3c1f2-8a1e-4c55-9d7e-2f1a6b3c4d5e',
      customer_id: 'c1e2d3f4-5a6b-4c7d-8e9f-0a1b2c3d4e5f', send_amount: '5000', receive_amount: '4925', total_fee: '75',
      send_currency: 'XAF', country_code: 'CM', operator_code: 'CM_MTN_MOMO', rail_type: 'mobile_money',
      source: { phone: '+237670000001' }, at: new Date().toISOString(),
    },
  };
}

export async function runWriters(store: Appender, opts: { writers: number; mode: Mode; seconds: number; prefix: string }): Promise<WriteResult> {
  const end = Date.now() + opts.seconds * 1000;
  let events = 0;
  let conflicts = 0;
  let seq = 0;
  const hot = `${opts.prefix}-hot`;
  const started = performance.now();
  await Promise.all(Array.from({ length: opts.writers }, async (_, w) => {
    let stream = opts.mode === 'hot' ? hot : `${opts.prefix}-w${w}-0`;
    let version = 0;
    let n = 0;
    while (Date.now() < end) {
      const r = await store.append(stream, version, sampleEvent(seq++));
      if (r === 'conflict') {
        conflicts++;
        version = await store.version(stream, version);
        continue;
      }
      events++;
      version = r;
      // Distinct streams stay short, like a payment's: a new stream every 10 events.
      if (opts.mode === 'distinct' && version >= 10) {
        stream = `${opts.prefix}-w${w}-${++n}`;
        version = 0;
      }
    }
  }));
  const ms = performance.now() - started;
  return { events, conflicts, ms, eventsPerSecond: (events * 1000) / ms };
}
