// Autovacuum's work, done by the service when the server's own autovacuum is off (`autovacuum = off`,
// as on this project's test and bench server): without it the service's payin throughput halved
// within a minute of steady load (the bench's 60-second run: 922 creates/s and p99 169 ms, against
// 2,010 and 89 ms with the tables vacuumed; bench/PROFILE.md §21). Each round first asks the server,
// and does the work only while its autovacuum is off (saying so once in the log), on autovacuum's
// rules and settings (infra/vacuum-need.ts), every 15 seconds on the service's clock. The embedded
// server runs with autovacuum on, so there this job only asks. (It was written for PGlite, which had
// no autovacuum: the job keeps its name, `embedded-vacuum`, so that scheduled rows stay valid.) The
// job is a durable one (one process at a time, whatever the number of workers); each table is one
// statement.
import type { Knex } from 'knex';
import type { Services } from '../commands/services.ts';
import type { Worker } from './worker.ts';
import { ident } from '../infra/sql-ident.ts';
import { tablesNeedingWork, type AutovacuumSettings, type TableStats, type TableWork } from '../infra/vacuum-need.ts';

export const EMBEDDED_VACUUM_JOB = 'embedded-vacuum';
export const EMBEDDED_VACUUM_KEY = 'tables';
export const VACUUM_EVERY_MS = 15 * 1000;

async function settings(knex: Knex): Promise<AutovacuumSettings & { databaseXidAge: number }> {
  const r = await knex.raw<{ rows: Array<Record<string, string>> }>(`SELECT
      current_setting('autovacuum_vacuum_threshold') AS vt, current_setting('autovacuum_vacuum_scale_factor') AS vs,
      current_setting('autovacuum_vacuum_insert_threshold') AS it, current_setting('autovacuum_vacuum_insert_scale_factor') AS "is",
      current_setting('autovacuum_analyze_threshold') AS at, current_setting('autovacuum_analyze_scale_factor') AS "as",
      current_setting('autovacuum_freeze_max_age') AS fm, current_setting('autovacuum_multixact_freeze_max_age') AS mm,
      (SELECT age(datfrozenxid) FROM pg_database WHERE datname = current_database()) AS dx`);
  const v = r.rows[0]!;
  return {
    vacuumThreshold: Number(v.vt), vacuumScaleFactor: Number(v.vs),
    insertThreshold: Number(v.it), insertScaleFactor: Number(v.is),
    analyzeThreshold: Number(v.at), analyzeScaleFactor: Number(v.as),
    freezeMaxAge: Number(v.fm), multixactFreezeMaxAge: Number(v.mm),
    databaseXidAge: Number(v.dx),
  };
}

async function tableStats(knex: Knex): Promise<TableStats[]> {
  const r = await knex.raw<{ rows: Array<Record<string, string | number>> }>(`SELECT s.schemaname, s.relname,
      c.reltuples::float8 AS reltuples, s.n_dead_tup, s.n_ins_since_vacuum, s.n_mod_since_analyze,
      age(c.relfrozenxid) AS xid_age, mxid_age(c.relminmxid) AS mxid_age
    FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid`);
  return r.rows.map((x) => ({
    schema: String(x.schemaname), table: String(x.relname), reltuples: Number(x.reltuples),
    deadRows: Number(x.n_dead_tup), insertedSinceVacuum: Number(x.n_ins_since_vacuum),
    modifiedSinceAnalyze: Number(x.n_mod_since_analyze), xidAge: Number(x.xid_age), multixactAge: Number(x.mxid_age),
  }));
}

/** VACUUM or ANALYZE one table; false if it is gone (a rebuild's shadow table or schema, dropped since the statistics were read). */
export async function runTableWork(knex: Knex, w: TableWork): Promise<boolean> {
  const name = `${ident(w.schema)}.${ident(w.table)}`;
  try {
    await knex.raw(w.vacuum ? `VACUUM (${w.analyze ? 'ANALYZE, ' : ''}SKIP_LOCKED) ${name}` : `ANALYZE (SKIP_LOCKED) ${name}`);
    return true;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === '42P01' || code === '3F000') return false; // undefined table, undefined schema
    throw err;
  }
}

/** The server's `autovacuum` setting: off, the service vacuums its own tables. */
export async function serverAutovacuum(knex: Knex): Promise<boolean> {
  const r = await knex.raw<{ rows: Array<{ on: boolean }> }>(`SELECT current_setting('autovacuum') = 'on' AS on`);
  return r.rows[0]!.on;
}

/** One round: the tables that need it vacuumed or analysed, one statement each. Returns what was done. */
export async function vacuumRound(knex: Knex): Promise<TableWork[]> {
  const s = await settings(knex);
  const work = tablesNeedingWork(await tableStats(knex), s);
  const done: TableWork[] = [];
  for (const w of work) if (await runTableWork(knex, w)) done.push(w);
  // The system catalogs age too, and no user table's vacuum freezes them: a database-wide VACUUM
  // when the database's oldest transaction id passes the same limit.
  if (s.databaseXidAge > s.freezeMaxAge) await knex.raw('VACUUM');
  return done;
}

export const embeddedVacuum: Worker = {
  name: EMBEDDED_VACUUM_JOB,
  async start(s: Services) {
    let warned = false;
    s.scheduler.register(EMBEDDED_VACUUM_JOB, async () => {
      const started = s.clock.now();
      const next = { retryAt: new Date(started.getTime() + VACUUM_EVERY_MS) };
      if (await serverAutovacuum(s.knex)) return next;
      if (!warned) s.log.warn("PostgreSQL's autovacuum is off: the service vacuums and analyses its own tables on autovacuum's rules");
      warned = true;
      const t0 = performance.now();
      const done = await vacuumRound(s.knex);
      if (done.length > 0) {
        // Routine housekeeping, like the server's autovacuum (which logs nothing by default): at debug.
        s.log.debug({ tables: done.map((w) => `${w.schema}.${w.table} (${w.reason})`), ms: Math.round(performance.now() - t0) }, 'tables vacuumed');
      }
      return next;
    }, { concurrency: 1 });
    await s.scheduler.schedule(EMBEDDED_VACUUM_JOB, EMBEDDED_VACUUM_KEY, {}, new Date(s.clock.now().getTime() + VACUUM_EVERY_MS));
    return async () => undefined;
  },
};
