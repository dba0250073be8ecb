// Mean server-side latency per route over a window, from the service's own histogram
// (http_request_duration_seconds sum and count on GET /metrics, read before and after): which of
// the requests a scenario mixes is the slow one, which the load generator's overall p50/p99 hide.
import { ADMIN_TOKEN } from './service.ts';

export type RouteTotals = Map<string, { sum: number; count: number }>;

export async function routeTotals(url: string): Promise<RouteTotals> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  if (!res.ok) throw new Error(`GET /metrics: ${res.status}`);
  const totals: RouteTotals = new Map();
  for (const line of (await res.text()).split('\n')) {
    const m = /^http_request_duration_seconds_(sum|count)\{method="([A-Z]+)",route="([^"]+)",status="2\d\d"\} ([0-9.e+-]+)$/.exec(line);
    if (!m) continue;
    const key = `${m[2]} ${m[3]}`;
    const t = totals.get(key) ?? { sum: 0, count: 0 };
    if (m[1] === 'sum') t.sum += Number(m[4]);
    else t.count += Number(m[4]);
    totals.set(key, t);
  }
  return totals;
}

/** Mean ms per route between two readings, for the routes answered in between. */
export function meanMsBetween(before: RouteTotals, after: RouteTotals): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [route, a] of after) {
    const b = before.get(route) ?? { sum: 0, count: 0 };
    const n = a.count - b.count;
    if (n > 0) out[route] = Math.round(((a.sum - b.sum) / n) * 10_000) / 10;
  }
  return out;
}
