// One scenario's figure as bench/results/latest.json stores it, and how a target is judged.

export interface Target {
  /** What is compared: the figure itself or its ratio to the ceiling. */
  on: 'value' | 'ratio';
  op: '>=' | '<=';
  bound: number;
}

export interface ScenarioResult {
  value: number;
  unit: string;
  /** The same measure for the ceiling (or peer) run side by side, when there is one. */
  ceiling: number | null;
  /** What the ceiling is (pgbench, Emmett, bare Express + INSERT…). */
  ceilingName: string | null;
  /** value / ceiling (rounded), null without a ceiling. */
  ratio: number | null;
  /** The target in words, e.g. "ratio >= 2"; null when the figure is reported only. */
  target: string | null;
  met: boolean | null;
  /** By how much a missed target is missed, in words. */
  shortBy?: string;
  /** Further figures of the same run (p50, conflicts, peer numbers…). */
  details?: Record<string, unknown>;
}

export function judge(opts: {
  value: number;
  unit: string;
  ceiling?: number | null;
  ceilingName?: string | null;
  target?: Target;
  details?: Record<string, unknown>;
}): ScenarioResult {
  const ceiling = opts.ceiling ?? null;
  const ratio = ceiling && ceiling > 0 ? Math.round((opts.value / ceiling) * 1000) / 1000 : null;
  const t = opts.target;
  let met: boolean | null = null;
  let shortBy: string | undefined;
  if (t) {
    const got = t.on === 'value' ? opts.value : ratio;
    if (got === null) met = null;
    else {
      met = t.op === '>=' ? got >= t.bound : got <= t.bound;
      if (!met) {
        const pct = Math.abs(got - t.bound) / t.bound * 100;
        const what = t.on === 'ratio' ? `ratio ${got}` : `${got} ${opts.unit}`;
        shortBy = `${what} vs ${t.op} ${t.bound}: ${pct.toFixed(0)}% ${t.op === '>=' ? 'below' : 'above'} the target`;
      }
    }
  }
  return {
    value: opts.value,
    unit: opts.unit,
    ceiling,
    ceilingName: opts.ceilingName ?? null,
    ratio,
    target: t ? `${t.on} ${t.op} ${t.bound}` : null,
    met,
    ...(shortBy ? { shortBy } : {}),
    ...(opts.details ? { details: opts.details } : {}),
  };
}
