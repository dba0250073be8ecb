// How far a payin load's background work lagged behind its requests: the merchant's payins not yet
// settled (the read model's status), polled until none is left. A payin's requests return before
// its leg is started at the provider; under a saturating load the starts fall behind the creates
// and catch up after the load (bench/PROFILE.md §34), so work per payin is only complete then.
import pg from 'pg';
import { round } from './stats.ts';

export interface Drain {
  /** Payins of the merchant not settled when the load ended. */
  pendingAtLoadEnd: number;
  /** Seconds from the load's end until every payin of the merchant had settled (or the limit). */
  seconds: number;
  /** Payins still not settled at the limit (0: all settled). */
  pendingAtLimit: number;
}

const pendingOf = async (c: pg.Client, merchantId: string): Promise<number> => (await c.query<{ n: number }>(
  `SELECT count(*)::int AS n FROM payins WHERE merchant_id = $1 AND status NOT IN ('completed', 'failed')`, [merchantId])).rows[0]!.n;

/**
 * Polls the service's database (`url`) every 500 ms until the merchant's payins are all settled, or
 * `limitMs` (each poll counts the merchant's payins: it is work for PostgreSQL, kept infrequent).
 */
export async function untilSettled(url: string, merchantId: string, limitMs = 60_000): Promise<Drain> {
  const t0 = Date.now();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const pendingAtLoadEnd = await pendingOf(c, merchantId);
    let pending = pendingAtLoadEnd;
    while (pending > 0 && Date.now() - t0 < limitMs) {
      await new Promise((r) => setTimeout(r, 500));
      pending = await pendingOf(c, merchantId);
    }
    return { pendingAtLoadEnd, seconds: round((Date.now() - t0) / 1000), pendingAtLimit: pending };
  } finally {
    await c.end();
  }
}

/**
 * The drain when every payin settled; otherwise an error (the scenario fails, loudly): a CPU figure
 * read with payins still to settle would leave their work out, which is what this wait is for.
 */
export function settledOrThrow(drain: Drain, what: string): Drain {
  if (drain.pendingAtLimit === 0) return drain;
  throw new Error(`${what}: ${drain.pendingAtLimit} payins still unsettled ${drain.seconds} s after it ended (${drain.pendingAtLoadEnd} then)`);
}
