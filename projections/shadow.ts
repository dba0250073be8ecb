// Shadow copies of a projection's tables, for an online rebuild and for the audit's fresh fold.
//
// A shadow is a schema of its own (`rebuild_<projection>` or `audit_<projection>`) holding an empty
// copy of each of the projection's tables (`CREATE TABLE … (LIKE live INCLUDING ALL EXCLUDING
// INDEXES)`: same columns, defaults, checks, storage and compression; then the keys and unique
// indexes under the live names, see shadowIndexes) and a one-row `_shadow_state` (the run that owns
// it and the position it has applied). The projection's own `apply` fills it unchanged: each batch runs with
// `SET LOCAL search_path TO <shadow>, <live>`, so the unqualified table names the projection uses
// resolve to the shadow copies while everything else (checkpoints, other tables) stays the live one.
//
// The run id guards against two runs on one shadow (a second rebuild of the same projection drops
// and recreates the schema): the first run finds another id at its next batch and stops with
// ShadowTakenOver instead of swapping in tables it did not build.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { EventStore, RecordedEvent } from '../infra/eventstore/types.ts';
import type { Projection } from './projection.ts';
import { historyOf, type StreamHistory } from './history.ts';
import { RowCache } from './row-cache.ts';
import { ident } from '../infra/sql-ident.ts';
import { copyRows, type InsertNew } from './copy-rows.ts';

export const STATE_TABLE = '_shadow_state';

export type ShadowPurpose = 'rebuild' | 'audit';

export interface Shadow {
  projection: Projection;
  /** Schema of the shadow tables. */
  schema: string;
  /** Schema of the live tables (the connection's current schema). */
  live: string;
  runId: string;
  /** Last position applied to the shadow. */
  position: bigint;
  /**
   * The stream rows this run last wrote: only this run writes its shadow (claim), so they hold until
   * a batch fails. Sized for a rebuild's batch, so a stream that spans two is not read back.
   */
  rows: RowCache;
  /** Rows new to the shadow are copied in (copy-rows.ts). */
  insertNew: InsertNew;
}

/** Rows a shadow keeps in memory: a batch of 10,000 events touches fewer streams than that. */
const SHADOW_ROWS_KEPT = 10_000;

export class ShadowTakenOver extends Error {
  constructor(schema: string) {
    super(`the shadow tables in schema ${schema} were taken over by another run (a second rebuild or audit of the same projection)`);
    this.name = 'ShadowTakenOver';
  }
}

export function shadowSchema(purpose: ShadowPurpose, projection: Projection): string {
  return `${purpose}_${projection.name.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`.slice(0, 63);
}

/** Creates (or recreates) the shadow of `projection`: empty copies of its tables, at position 0. */
export async function createShadow(knex: Knex, projection: Projection, purpose: ShadowPurpose): Promise<Shadow> {
  const schema = shadowSchema(purpose, projection);
  const runId = randomUUID();
  const live = ((await knex.raw<{ rows: Array<{ s: string }> }>('SELECT current_schema() AS s')).rows[0]!).s;
  await knex.raw(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`);
  await knex.raw(`CREATE SCHEMA ${ident(schema)}`);
  // An audit's shadow is scratch (a crash loses the run anyway, see ShadowTakenOver): unlogged, its
  // rows skip the WAL. A rebuild's shadow becomes the live tables (rebuild.ts), so it is logged from
  // the start: writing the WAL as rows are replayed costs less than SET LOGGED's rewrite at the end.
  const persistence = purpose === 'audit' ? 'UNLOGGED ' : '';
  for (const t of projection.tables) {
    await knex.raw(`CREATE ${persistence}TABLE ${ident(schema)}.${ident(t)} (LIKE ${ident(live)}.${ident(t)} INCLUDING ALL EXCLUDING INDEXES)`);
    // Only the keys and unique indexes serve a shadow while it is filled (the upserts' ON CONFLICT,
    // the audit's join on the primary key); the others would be maintained for every replayed row
    // and never read (a rebuild builds them once replayed, before its swap).
    for (const statement of await shadowIndexes(knex, live, schema, t, 'unique')) await knex.raw(statement);
  }
  await knex.raw(`CREATE TABLE ${ident(schema)}.${ident(STATE_TABLE)} (run_id text NOT NULL, position bigint NOT NULL)`);
  await knex.raw(`INSERT INTO ${ident(schema)}.${ident(STATE_TABLE)} (run_id, position) VALUES (?, 0)`, [runId]);
  return { projection, schema, live, runId, position: 0n, rows: new RowCache(SHADOW_ROWS_KEPT), insertNew: copyRows };
}

export async function dropShadow(knex: Knex, shadow: Shadow): Promise<void> {
  // Only the run that owns it drops it (a newer run may have recreated it meanwhile).
  const owner = await knex.raw<{ rows: Array<{ run_id: string }> }>(
    `SELECT run_id FROM ${ident(shadow.schema)}.${ident(STATE_TABLE)}`,
  ).then((r) => r.rows[0]?.run_id, () => undefined);
  if (owner === undefined || owner === shadow.runId) await knex.raw(`DROP SCHEMA IF EXISTS ${ident(shadow.schema)} CASCADE`);
}

/** Inside `tx`: unqualified names resolve to the shadow first (until the transaction ends or `useLive`). */
export async function useShadow(tx: Knex.Transaction, shadow: Shadow): Promise<void> {
  await tx.raw(`SET LOCAL search_path TO ${ident(shadow.schema)}, ${ident(shadow.live)}`);
}

export async function useLive(tx: Knex.Transaction, shadow: Shadow): Promise<void> {
  await tx.raw(`SET LOCAL search_path TO ${ident(shadow.live)}`);
}

/** Checks that this run still owns the shadow (locking its state row until `tx` ends). */
export async function claim(tx: Knex.Transaction, shadow: Shadow): Promise<void> {
  const r = await tx.raw<{ rows: Array<{ run_id: string; position: string }> }>(
    `SELECT run_id, position FROM ${ident(shadow.schema)}.${ident(STATE_TABLE)} FOR UPDATE`,
  ).catch(() => ({ rows: [] as Array<{ run_id: string; position: string }> }));
  const row = r.rows[0];
  if (!row || row.run_id !== shadow.runId || BigInt(row.position) !== shadow.position) throw new ShadowTakenOver(shadow.schema);
}

/**
 * Inside `tx`: checks the run still owns the shadow, runs `write` with the shadow's tables in front,
 * and moves the shadow's position to `last` (in memory once `tx` commits: see applyToShadow).
 */
async function inShadow(tx: Knex.Transaction, shadow: Shadow, last: bigint, write: (tx: Knex.Transaction) => Promise<void>): Promise<void> {
  await claim(tx, shadow);
  await useShadow(tx, shadow);
  await write(tx);
  await useLive(tx, shadow);
  await tx.raw(`UPDATE ${ident(shadow.schema)}.${ident(STATE_TABLE)} SET position = ?`, [last.toString()]);
}

/** One batch into the shadow, in its own transaction: the projection's apply, in turn. */
export async function applyToShadow(knex: Knex, shadow: Shadow, events: RecordedEvent[], history: StreamHistory): Promise<void> {
  const fresh = events.filter((e) => e.position > shadow.position);
  if (fresh.length === 0) return;
  const last = fresh[fresh.length - 1]!.position;
  shadow.rows.begin(shadow.position);
  try {
    await knex.transaction((tx) => inShadow(tx, shadow, last, (tx) =>
      shadow.projection.apply(tx, fresh, { history, rows: shadow.rows, insertNew: shadow.insertNew })));
  } catch (err) {
    shadow.rows.reset(); // the transaction rolled back
    throw err;
  }
  shadow.position = last;
  shadow.rows.commit(last);
}

/**
 * The global order from `from` to `upTo` (inclusive; to the store's head when undefined) in batches,
 * the next one read while the caller works on this one. Events are read without their metadata: no
 * projection looks at it.
 */
async function* batchesOf(store: EventStore, from: bigint, upTo: bigint | undefined, size: number): AsyncGenerator<RecordedEvent[]> {
  if (upTo !== undefined && from >= upTo) return;
  const read = (after: bigint) => {
    const p = store.readAll(after, size, { metadata: false });
    p.catch(() => undefined); // a failed prefetch surfaces when awaited, not as an unhandled rejection
    return p;
  };
  let next = read(from);
  for (;;) {
    const got = await next;
    const batch = upTo === undefined ? got : got.filter((e) => e.position <= upTo);
    if (batch.length === 0) return;
    const more = batch.length === got.length;
    if (more) next = read(batch[batch.length - 1]!.position);
    yield batch;
    if (!more) return;
  }
}

/**
 * Brings the shadow from its position up to `upTo` (inclusive; to the store's head when undefined),
 * one transaction per batch.
 *
 * For a projection that can prepare its rows apart from writing them, batch N + 1 is
 * folded and rendered here while the server writes batch N (bench issue 8: Node waited for the
 * server ~0.75 s of a 2.8 s replay). Batch N + 1 is prepared on the rows as batch N leaves them and
 * written only once N has committed; any failure stops the whole run (the rebuild or audit fails
 * and its shadow is dropped), so nothing prepared on a batch that did not commit is ever written.
 */
export async function catchUp(knex: Knex, store: EventStore, shadow: Shadow, upTo: bigint | undefined, batchSize: number,
  onBatch: (events: number) => void = () => undefined): Promise<number> {
  const history = historyOf(store);
  const prepare = shadow.projection.prepare;
  let applied = 0;
  if (!prepare) {
    for await (const batch of batchesOf(store, shadow.position, upTo, batchSize)) {
      await applyToShadow(knex, shadow, batch, history);
      applied += batch.length;
      onBatch(batch.length);
    }
    return applied;
  }
  const ctx = { history, rows: shadow.rows, insertNew: shadow.insertNew };
  let prepared = shadow.position; // where the rows cached in shadow.rows stand
  let writing: Promise<void> | undefined; // the previous batch's transaction
  try {
    for await (const batch of batchesOf(store, shadow.position, upTo, batchSize)) {
      const last = batch[batch.length - 1]!.position;
      shadow.rows.begin(prepared);
      const write = await prepare(knex, batch, ctx);
      shadow.rows.commit(last);
      prepared = last;
      await writing;
      writing = (async () => {
        await knex.transaction((tx) => inShadow(tx, shadow, last, write));
        shadow.position = last;
        applied += batch.length;
        onBatch(batch.length);
      })();
      writing.catch(() => undefined); // awaited before the next batch is written, or below
    }
    await writing;
  } catch (err) {
    await writing?.catch(() => undefined); // no transaction of this run is left running
    shadow.rows.reset();
    throw err;
  }
  return applied;
}

/**
 * The statements that give the shadow copy of `table` the live table's indexes under the same names:
 * keys and unique indexes (also exclusion constraints), or the others (`secondary`). A constraint's
 * index is added as that constraint (ALTER TABLE … ADD CONSTRAINT <its name> <its definition>).
 */
export async function shadowIndexes(knex: Knex | Knex.Transaction, live: string, schema: string, table: string,
  which: 'unique' | 'secondary'): Promise<string[]> {
  const r = await knex.raw<{ rows: Array<{ is_unique: boolean; conname: string | null; condef: string | null; indexdef: string; qualified: string }> }>(
    `SELECT i.indisunique OR k.oid IS NOT NULL AS is_unique, k.conname, pg_get_constraintdef(k.oid) AS condef,
            pg_get_indexdef(i.indexrelid) AS indexdef, quote_ident(?) || '.' || quote_ident(?) AS qualified
       FROM pg_index i
       JOIN pg_class c ON c.oid = i.indexrelid
       LEFT JOIN pg_constraint k ON k.conindid = i.indexrelid AND k.conrelid = i.indrelid AND k.contype IN ('p', 'u', 'x')
     WHERE i.indrelid = (quote_ident(?) || '.' || quote_ident(?))::regclass
     ORDER BY c.relname`,
    [live, table, live, table],
  );
  const target = `${ident(schema)}.${ident(table)}`;
  return r.rows.filter((ix) => ix.is_unique === (which === 'unique')).map((ix) => {
    if (ix.conname !== null) return `ALTER TABLE ${target} ADD CONSTRAINT ${ident(ix.conname)} ${ix.condef}`;
    // pg_get_indexdef names the table schema-qualified, quoted as quote_ident does.
    const on = ` ON ${ix.qualified} USING `;
    if (!ix.indexdef.includes(on)) throw new Error(`unexpected index definition on ${live}.${table}: ${ix.indexdef}`);
    return ix.indexdef.replace(on, ` ON ${target} USING `);
  });
}

/** The columns of a live table, in order. */
export async function columnsOf(knex: Knex | Knex.Transaction, schema: string, table: string): Promise<string[]> {
  const r = await knex.raw<{ rows: Array<{ column_name: string }> }>(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position`,
    [schema, table],
  );
  return r.rows.map((c) => c.column_name);
}

/** The primary key's columns of a table (empty when it has none). */
export async function primaryKeyOf(knex: Knex | Knex.Transaction, schema: string, table: string): Promise<string[]> {
  const r = await knex.raw<{ rows: Array<{ attname: string }> }>(
    `SELECT a.attname FROM pg_index i
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
     WHERE i.indrelid = (quote_ident(?) || '.' || quote_ident(?))::regclass AND i.indisprimary
     ORDER BY array_position(i.indkey::int2[], a.attnum)`,
    [schema, table],
  );
  return r.rows.map((c) => c.attname);
}
