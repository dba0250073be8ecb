// A projector batch as one statement: the rows written by data-modifying
// CTEs, the checkpoints moved by a compare-and-set against where this projector left them, and the
// whole statement failed (rows with it) unless every checkpoint moved (projector_expect_moved, migration
// 017). One round trip, no BEGIN, lock, checkpoint UPDATE and COMMIT of their own: each of those
// waited for a turn of the service's event loop, several ms under load, and every create waits for
// its batch (read-your-writes): the projector's wait was half a payin's latency (bench issue 8,
// bench/PROFILE.md §10).
//
// The rows are computed before the statement, on the checkpoints this projector last committed, so
// the plan can be wrong only when another process moved a checkpoint meanwhile: the compare-and-set
// then fails the statement, and the caller applies the batch the careful way, under the checkpoint
// lock (projector.ts, applyBatchToAll). The same happens for anything this path cannot take: a
// projection without `prepare` that has work in the batch, a failing statement, a lost connection.
import type { Knex } from 'knex';
import type { RecordedEvent } from '../infra/eventstore/types.ts';
import type { StreamHistory } from './history.ts';
import type { Projection } from './projection.ts';
import type { RowCache } from './row-cache.ts';

/** This path cannot take the batch: apply it the careful way. */
class NotOneStatement extends Error {}

interface Statement { sql: string; bindings: readonly unknown[] }

/**
 * The transaction a projection's prepared write (Projection.prepare: writes only, results never
 * read) is given here: each raw statement is kept to be sent later, anything else refused.
 */
function recordingTx(out: Statement[]): Knex.Transaction {
  const raw = (sql: string, bindings: readonly unknown[] = []) => {
    if (/^\s*(WITH|SELECT)\b/i.test(sql)) throw new NotOneStatement('a statement that is not a plain write');
    out.push({ sql, bindings });
    return Promise.resolve({ rows: [], rowCount: 0 });
  };
  return refusingTx({ raw });
}

/** A stand-in transaction that fails at any use beyond `allowed`: the batch goes the careful way. */
function refusingTx(allowed: Record<string, unknown> = {}): Knex.Transaction {
  const target = function refused() { throw new NotOneStatement('a query builder call'); };
  return new Proxy(target, {
    get(_t, prop) {
      if (typeof prop === 'string' && prop in allowed) return allowed[prop];
      if (prop === 'then') return undefined; // not a thenable
      throw new NotOneStatement(`tx.${String(prop)}`);
    },
    apply() { throw new NotOneStatement('a query builder call'); },
  }) as unknown as Knex.Transaction;
}

/**
 * Applies `events` to every projection from the checkpoints in `known` (this projector's last
 * commit). Returns the checkpoints after the batch, or undefined when the batch must be applied the
 * careful way (nothing written, the row caches reset).
 */
export async function applyInOneStatement(knex: Knex, projections: Projection[], events: RecordedEvent[], history: StreamHistory,
  caches: Map<string, RowCache>, known: ReadonlyMap<string, bigint>): Promise<Map<string, bigint> | undefined> {
  const statements: Statement[] = [];
  const moved: Array<[string, bigint]> = [];
  const resetAll = () => { for (const c of caches.values()) c.reset(); };
  try {
    for (const p of projections) {
      const at = known.get(p.name);
      if (at === undefined) throw new NotOneStatement(`no known checkpoint for ${p.name}`);
      const fresh = events.filter((e) => e.position > at);
      if (fresh.length === 0) continue;
      const cache = caches.get(p.name);
      cache?.begin(at);
      const ctx = { history, ...(cache ? { rows: cache } : {}) };
      if (p.prepare) await (await p.prepare(knex, fresh, ctx))(recordingTx(statements));
      else await p.apply(refusingTx(), fresh, ctx); // nothing to do for this batch, or refused
      moved.push([p.name, fresh[fresh.length - 1]!.position]);
    }
  } catch {
    // NotOneStatement, or a real fault that the careful way meets again and reports.
    resetAll();
    return undefined;
  }
  const after = new Map(known);
  if (moved.length === 0) return after;
  for (const [name, position] of moved) after.set(name, position);

  const ctes = statements.map((st, i) => `w${i} AS (${st.sql})`);
  // The checkpoint rows are locked NOWAIT: this statement already holds its tables' locks (taken
  // when it is planned), so waiting here for a rebuild's swap, which holds a checkpoint and wants
  // those tables, would deadlock. A held checkpoint fails the statement at once; the careful way
  // then waits on the lock first, as the swap does. (The tables are locked in the order the
  // projection lists them, the swap's order, so neither waits for the other on them the other way.)
  const names = moved.map(([n]) => n);
  const sql = `WITH lk AS (
      SELECT name, position FROM checkpoints WHERE name = ANY(?::text[]) FOR UPDATE NOWAIT),
    cp AS (
      UPDATE checkpoints c SET position = m.position, updated_at = now()
      FROM unnest(?::text[], ?::bigint[], ?::bigint[]) AS m(name, expected, position), lk
      WHERE c.name = m.name AND lk.name = m.name AND lk.position = m.expected RETURNING 1)${ctes.map((c) => `,\n    ${c}`).join('')}
    SELECT projector_expect_moved((SELECT count(*) FROM cp), ?) AS ok`;
  const bindings = [
    names, names, moved.map(([n]) => known.get(n)!.toString()), moved.map(([, p]) => p.toString()),
    ...statements.flatMap((st) => st.bindings), moved.length,
  ];
  let committed = false;
  try {
    await knex.raw(sql, bindings as Knex.RawBinding[]);
    committed = true;
  } catch {
    // 40001 from projector_expect_moved (another process moved a checkpoint), 55P03 (a checkpoint
    // held by another transaction), or a fault that the careful way meets again and reports. A single statement either committed whole or not at all.
  }
  if (!committed) {
    resetAll();
    return undefined;
  }
  for (const [name, position] of moved) caches.get(name)?.commit(position);
  return after;
}
