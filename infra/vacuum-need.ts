// Which tables need a VACUUM or an ANALYZE, by PostgreSQL's own autovacuum rules
// (relation_needs_vacanalyze in src/backend/postmaster/autovacuum.c), for a server whose autovacuum
// is off: without this its dead rows (keys completed, jobs removed, read models updated) are never
// reclaimed, its planner statistics never refreshed and its transaction ids never frozen
// (workers/embedded-vacuum.ts). Pure: the statistics and the settings in, the work out.

export interface TableStats {
  schema: string;
  table: string;
  /** pg_class.reltuples: the row count as of the last VACUUM or ANALYZE; -1 when never counted. */
  reltuples: number;
  deadRows: number;
  insertedSinceVacuum: number;
  modifiedSinceAnalyze: number;
  /** age(relfrozenxid): transactions since the table's oldest unfrozen row id. */
  xidAge: number;
  /** mxid_age(relminmxid). */
  multixactAge: number;
}

/** PostgreSQL's autovacuum settings, as current_setting gives them. */
export interface AutovacuumSettings {
  vacuumThreshold: number;
  vacuumScaleFactor: number;
  /** -1 disables the vacuum of insert-only tables. */
  insertThreshold: number;
  insertScaleFactor: number;
  analyzeThreshold: number;
  analyzeScaleFactor: number;
  freezeMaxAge: number;
  multixactFreezeMaxAge: number;
}

export interface TableWork {
  schema: string;
  table: string;
  /** VACUUM (with ANALYZE when `analyze`); false: ANALYZE alone. */
  vacuum: boolean;
  analyze: boolean;
  /** Why, for the log. */
  reason: 'wraparound' | 'dead rows' | 'inserts' | 'statistics';
}

export function tablesNeedingWork(tables: TableStats[], s: AutovacuumSettings): TableWork[] {
  const work: TableWork[] = [];
  for (const t of tables) {
    const rows = Math.max(t.reltuples, 0);
    const wraparound = t.xidAge > s.freezeMaxAge || t.multixactAge > s.multixactFreezeMaxAge;
    const dead = t.deadRows > s.vacuumThreshold + s.vacuumScaleFactor * rows;
    const inserts = s.insertThreshold >= 0 && t.insertedSinceVacuum > s.insertThreshold + s.insertScaleFactor * rows;
    const analyze = t.modifiedSinceAnalyze > s.analyzeThreshold + s.analyzeScaleFactor * rows;
    if (!wraparound && !dead && !inserts && !analyze) continue;
    const reason = wraparound ? 'wraparound' : dead ? 'dead rows' : inserts ? 'inserts' : 'statistics';
    work.push({ schema: t.schema, table: t.table, vacuum: wraparound || dead || inserts, analyze, reason });
  }
  // Wraparound first: a database that reaches the limit stops taking writes.
  return work.sort((a, b) => Number(b.reason === 'wraparound') - Number(a.reason === 'wraparound'));
}
