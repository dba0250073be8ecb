// The audit of the read models: each projection is folded afresh from the event store into shadow
// tables (projections/shadow.ts, schema `audit_<projection>`), then compared row by row with the
// live tables at the same position.
//
// Same position without stopping anything: the shadow is built up to the live checkpoint read at
// the start; the comparison then runs in one REPEATABLE READ transaction, whose snapshot shows the
// live tables exactly as of the checkpoint it shows (the projector writes rows and checkpoint in one
// transaction). If the live projection moved on meanwhile, the shadow catches up to it outside the
// transaction and the comparison is tried again.
import type { Knex } from 'knex';
import type { EventStore } from '../infra/eventstore/types.ts';
import type { Projection } from './projection.ts';
import { readCheckpoint } from '../infra/checkpoints.ts';
import { catchUp, createShadow, dropShadow, primaryKeyOf, type Shadow } from './shadow.ts';
import { ident } from '../infra/sql-ident.ts';

export const AUDIT_BATCH_SIZE = 1000;
/** Differing rows described per table (every one is counted). */
const MAX_SAMPLES = 20;
const MAX_VALUE_CHARS = 200;
const MAX_COMPARE_ATTEMPTS = 20;

export interface RowDifference {
  /** The row's primary key, column → value. */
  key: Record<string, unknown>;
  /** missing: a fresh fold has the row, the live table not; unexpected: the reverse; changed: both, different. */
  kind: 'missing' | 'unexpected' | 'changed';
  /** For `changed`: each differing column with the live value and the fresh fold's. */
  columns?: Array<{ column: string; live: string; fresh: string }>;
}

export interface TableAudit {
  table: string;
  live_rows: number;
  fresh_rows: number;
  missing: number;
  unexpected: number;
  changed: number;
  samples: RowDifference[];
}

export interface ProjectionAudit {
  projection: string;
  /** The position both sides were compared at. */
  position: string;
  ok: boolean;
  tables: TableAudit[];
}

const show = (v: unknown) => {
  const text = v === undefined ? '(absent)' : JSON.stringify(v);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
};

async function compareTable(tx: Knex.Transaction, shadow: Shadow, table: string): Promise<TableAudit> {
  const live = `${ident(shadow.live)}.${ident(table)}`;
  const fresh = `${ident(shadow.schema)}.${ident(table)}`;
  const pk = await primaryKeyOf(tx, shadow.live, table);
  // Rows as jsonb: compared by value (key order, numeric scale and whitespace do not matter).
  const key = pk.length > 0 ? `jsonb_build_object(${pk.map((c) => `'${c.replace(/'/g, "''")}', t.${ident(c)}`).join(', ')})` : 'to_jsonb(t)';
  const r = await tx.raw<{ rows: Array<{ k: Record<string, unknown>; a: Record<string, unknown> | null; b: Record<string, unknown> | null; n: string }> }>(
    `WITH a AS (SELECT ${key} AS k, to_jsonb(t) AS j FROM ${live} t),
          b AS (SELECT ${key} AS k, to_jsonb(t) AS j FROM ${fresh} t),
          d AS (SELECT coalesce(a.k, b.k) AS k, a.j AS a, b.j AS b FROM a FULL JOIN b ON a.k = b.k WHERE a.j IS DISTINCT FROM b.j)
     SELECT k, a, b, (SELECT count(*) FROM d) AS n FROM d ORDER BY k::text LIMIT ${MAX_SAMPLES}`,
  );
  const counts = await tx.raw<{ rows: Array<{ live: string; fresh: string; missing: string; unexpected: string }> }>(
    `WITH a AS (SELECT ${key} AS k FROM ${live} t), b AS (SELECT ${key} AS k FROM ${fresh} t)
     SELECT (SELECT count(*) FROM a) AS live, (SELECT count(*) FROM b) AS fresh,
            (SELECT count(*) FROM b WHERE NOT EXISTS (SELECT 1 FROM a WHERE a.k = b.k)) AS missing,
            (SELECT count(*) FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE a.k = b.k)) AS unexpected`,
  );
  const c = counts.rows[0]!;
  const differing = Number(r.rows[0]?.n ?? 0);
  const samples: RowDifference[] = r.rows.map((row) => {
    // The key's columns in the primary key's order (jsonb keeps its own order).
    const key = pk.length > 0 ? Object.fromEntries(pk.map((c) => [c, row.k[c]])) : row.k;
    if (row.a === null) return { key, kind: 'missing' };
    if (row.b === null) return { key, kind: 'unexpected' };
    const columns = [...new Set([...Object.keys(row.a), ...Object.keys(row.b)])]
      .filter((col) => JSON.stringify(row.a![col]) !== JSON.stringify(row.b![col]))
      .map((col) => ({ column: col, live: show(row.a![col]), fresh: show(row.b![col]) }));
    return { key, kind: 'changed', columns };
  });
  const missing = Number(c.missing);
  const unexpected = Number(c.unexpected);
  return {
    table, live_rows: Number(c.live), fresh_rows: Number(c.fresh), missing, unexpected,
    changed: differing - missing - unexpected, samples,
  };
}

/** Folds `projection` afresh and compares it with its live tables. Never blocks the projector. */
export async function auditProjection(knex: Knex, store: EventStore, projection: Projection, batchSize = AUDIT_BATCH_SIZE): Promise<ProjectionAudit> {
  const shadow = await createShadow(knex, projection, 'audit');
  try {
    let upTo = await readCheckpoint(knex, projection.name);
    for (let attempt = 1; ; attempt++) {
      await catchUp(knex, store, shadow, upTo, batchSize);
      const outcome = await knex.transaction(async (tx): Promise<{ tables: TableAudit[] } | { behind: bigint }> => {
        // The shadow holds every event up to `upTo`: it is at the live position when that is `upTo`.
        const live = await readCheckpoint(tx, projection.name);
        if (live !== upTo) return { behind: live };
        const tables: TableAudit[] = [];
        for (const t of projection.tables) tables.push(await compareTable(tx, shadow, t));
        return { tables };
      }, { isolationLevel: 'repeatable read' });
      if ('tables' in outcome) {
        const ok = outcome.tables.every((t) => t.missing + t.unexpected + t.changed === 0);
        return { projection: projection.name, position: upTo.toString(), ok, tables: outcome.tables };
      }
      if (attempt >= MAX_COMPARE_ATTEMPTS) {
        throw new Error(`audit of ${projection.name}: the live projection kept moving (${attempt} attempts to compare at one position)`);
      }
      upTo = outcome.behind;
    }
  } finally {
    await dropShadow(knex, shadow).catch(() => undefined);
  }
}
