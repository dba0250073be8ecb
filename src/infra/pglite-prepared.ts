// Prepared statements on PGlite, as prepared-statements.ts gives node-postgres. PGlite's `query`
// sends every call as an unnamed statement in six exchanges with the WebAssembly backend (Parse,
// Describe, Bind, Describe, Execute, Sync), so PostgreSQL parsed and analysed the same text on every
// call (bench issue 8). Here a text is parsed once under a name, its parameter types and row
// description kept, and each later call is one exchange: Bind, Execute, Sync.
//
// Each call is still planned for the tables as they are (PLAN_EACH_CALL, run once the database is
// open): after five calls PostgreSQL may keep one generic plan for good, which PostgreSQL's
// autovacuum replaces as a table's statistics change; PGlite runs no autovacuum, so a plan made
// while a table was empty (a hash join over a sequential scan) stayed as the table grew, and an
// UPDATE of 20 idempotency keys went from 1.2 to 5.5 ms at 50,000 keys.
//
// Same bound and same recovery as on PostgreSQL: at most MAX_PREPARED texts are named, the rest are
// parsed on each call as before (unnamed). A statement whose result shape changed under it (DDL on
// a `SELECT *`: `cached plan must not change result type`) fails once, and its text is prepared
// again under a new name on the next call. Calls run under PGlite's own locks, as `query` does.
import type { PGlite, protocol as Protocol, parse as Parse, Results, QueryOptions } from '@electric-sql/pglite';
import { MAX_PREPARED } from './prepared-statements.ts';

/** Run once on the session: every call of a prepared statement planned for its parameters and the tables now. */
export const PLAN_EACH_CALL = 'SET plan_cache_mode = force_custom_plan';

type BackendMessage = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];
const RESULT_TYPE_CHANGED = /cached plan must not change result type/;

interface Prepared {
  name: string;
  paramTypes: number[];
  /** Absent for statements that return no rows (the backend answered NoData). */
  rowDescription: BackendMessage | undefined;
}

/** What this needs of `@electric-sql/pglite`, passed in: the module is loaded only in the embedded mode. */
export interface PgliteProtocol {
  serialize: typeof Protocol.serialize;
  parseResults: typeof Parse.parseResults;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The error as PGlite's own `query` throws it: the database's error with the call attached. */
function withCall(err: unknown, text: string, params: unknown[], options: QueryOptions | undefined): unknown {
  if (err && typeof err === 'object') Object.assign(err, { query: text, params, queryOptions: options });
  return err;
}

/** Makes `pglite.query` prepare each parameterised text once (in place; returns the same instance). */
export function preparePglite(pglite: PGlite, lib: PgliteProtocol, maxPrepared = MAX_PREPARED): PGlite {
  const statements = new Map<string, Prepared>();
  let next = 0;
  const query = pglite.query.bind(pglite);
  const { serialize } = lib;

  const exchange = (message: Uint8Array, options: QueryOptions | undefined) =>
    pglite.execProtocolStream(message, { syncToFs: false, ...(options?.onNotice ? { onNotice: options.onNotice } : {}) });

  /** Parses `text` and describes it; under a name kept for later calls, or unnamed (past the bound). */
  async function prepare(text: string, options: QueryOptions | undefined, keep: boolean): Promise<Prepared> {
    const name = keep ? `pq${next++}` : '';
    const messages = await exchange(concat([
      serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync(),
    ]), options);
    const description = messages.find((m) => m.name === 'parameterDescription') as { dataTypeIDs?: number[] } | undefined;
    const prepared = {
      name,
      paramTypes: description?.dataTypeIDs ?? [],
      rowDescription: messages.find((m) => m.name === 'rowDescription'),
    };
    if (keep) statements.set(text, prepared);
    return prepared;
  }

  async function run(text: string, params: unknown[], options: QueryOptions | undefined): Promise<Results<unknown>> {
    // Looked up under the lock: a call queued behind another with the same new text reuses it, and
    // the bound holds however many new texts arrive together.
    const st = statements.get(text) ?? await prepare(text, options, statements.size < maxPrepared);
    // As PGlite's `query` serialises parameters: by the type the backend gave each one.
    const values = params.map((v, i) => {
      if (v === null || v === undefined) return null;
      const type = st.paramTypes[i]!;
      const serializer = options?.serializers?.[type] ?? pglite.serializers[type];
      return serializer ? serializer(v) : String(v);
    });
    let messages: BackendMessage[];
    try {
      messages = await exchange(concat([serialize.bind({ statement: st.name, values }), serialize.execute({}), serialize.sync()]), options);
    } catch (err) {
      if (st.name && err instanceof Error && RESULT_TYPE_CHANGED.test(err.message) && statements.get(text) === st) statements.delete(text);
      throw err;
    }
    await pglite.syncToFs();
    const results = lib.parseResults(st.rowDescription ? [st.rowDescription, ...messages] : messages, pglite.parsers, options);
    return results[0] as Results<unknown>;
  }

  const prepared = (async (text: string, params?: unknown[], options?: QueryOptions) => {
    // PGlite's own path for calls without parameters (as on PostgreSQL: knex always sends them, DDL
    // and one-off statements by hand do not) and for what it handles beyond a plain call: files sent
    // as blobs, forced types. Texts past the bound run unnamed (parsed each time) in `run`.
    if (!Array.isArray(params) || options?.blob || options?.paramTypes) {
      return query(text, params, options);
    }
    const values = params;
    await pglite._checkReady();
    try {
      return await pglite._runExclusiveTransaction(() => pglite._runExclusiveQuery(() => run(text, values, options)));
    } catch (err) {
      throw withCall(err, text, values, options);
    }
  }) as typeof pglite.query;
  (pglite as { query: typeof pglite.query }).query = prepared;
  return pglite;
}
