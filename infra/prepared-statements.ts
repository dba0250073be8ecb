// Prepared statements for every parameterised query on a node-postgres connection. knex sends
// each query unnamed, so PostgreSQL parses, analyses and plans the same text again on every call
// (measured: about a sixth of the server's CPU per payment). Naming a query by its text makes
// node-postgres send its Parse once per connection and only Bind/Execute afterwards.
//
// Bounded: at most MAX_PREPARED texts per connection are named (queries whose text varies, such as
// multi-row VALUES lists, stop being named once the budget is spent, and run as before).
// PostgreSQL re-plans a prepared statement by itself after DDL on what it uses or a change of
// search_path (the rebuild's shadow tables); the one case it refuses is a result row whose shape
// changed (`cached plan must not change result type`, after ALTER TABLE on a `SELECT *`): that
// call fails once and the text gets a fresh name, so the next call prepares it again.
import type pg from 'pg';

export const MAX_PREPARED = 256;
const RESULT_TYPE_CHANGED = /cached plan must not change result type/;

type QueryFn = (...args: unknown[]) => unknown;

export function prepareByText(conn: pg.Client): void {
  const names = new Map<string, string>();
  let next = 0;
  const query = conn.query.bind(conn) as QueryFn;
  (conn as unknown as { query: QueryFn }).query = (config: unknown, ...rest: unknown[]) => {
    const c = config as { text?: unknown; name?: unknown; values?: unknown } | null;
    if (!c || typeof c !== 'object' || typeof c.text !== 'string' || c.name !== undefined || !Array.isArray(c.values)) {
      return query(config, ...rest);
    }
    const text = c.text;
    let name = names.get(text);
    if (name === undefined) {
      if (names.size >= MAX_PREPARED) return query(config, ...rest);
      name = `q${next++}`;
      names.set(text, name);
    }
    const forget = (err: unknown) => {
      if (err instanceof Error && RESULT_TYPE_CHANGED.test(err.message) && names.get(text) === name) names.set(text, `q${next++}`);
    };
    const last = rest[rest.length - 1];
    if (typeof last === 'function') {
      // knex's style: a callback.
      return query({ ...c, name }, ...rest.slice(0, -1), (err: unknown, res: unknown) => {
        if (err) forget(err);
        (last as (e: unknown, r: unknown) => void)(err, res);
      });
    }
    const out = query({ ...c, name }, ...rest);
    if (out && typeof (out as Promise<unknown>).catch === 'function') {
      (out as Promise<unknown>).catch(forget);
    }
    return out;
  };
}
