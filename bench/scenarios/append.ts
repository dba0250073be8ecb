// append: event-store appends at 1 and 16 writers, to distinct streams and to one hot stream, in
// events/s. Side by side on the same database: pgbench single-row INSERTs at the same concurrency
// (the ceiling) and Emmett's PostgreSQL event store (the peer). Embedded: the same store on an
// embedded PostgreSQL (the server the service's embedded mode runs, started here in a directory of
// its own and stopped after) against single-row INSERTs into that same server.
import type { Profile } from '../lib/profile.ts';
import { judge, type ScenarioResult } from '../lib/result.ts';
import { createDatabase } from '../lib/database.ts';
import { runWriters, type Mode, type WriteResult } from '../lib/writers.ts';
import { round } from '../lib/stats.ts';
import { ourAppender } from '../ceilings/ours.ts';
import { emmettAppender } from '../ceilings/emmett.ts';
import { pgbenchInsert } from '../ceilings/pgbench.ts';
import { embeddedInsert } from '../ceilings/embedded-insert.ts';
import { withEmbeddedDatabase } from '../lib/embedded.ts';

const WRITERS = [1, 16];
const MODES: Mode[] = ['distinct', 'hot'];
const fig = (r: WriteResult) => ({ eventsPerSecond: round(r.eventsPerSecond), events: r.events, conflicts: r.conflicts });

export async function append(profile: Profile, log: (s: string) => void): Promise<Record<string, ScenarioResult>> {
  const out: Record<string, ScenarioResult> = {};
  const db = await createDatabase();
  try {
    const ours = await ourAppender({ databaseUrl: db.url });
    const emmett = emmettAppender(db.url);
    try {
      for (const writers of WRITERS) {
        const ceiling = await pgbenchInsert(db.url, writers, profile.appendSeconds);
        for (const mode of MODES) {
          const o = await runWriters(ours, { writers, mode, seconds: profile.appendSeconds, prefix: `ours-${writers}-${mode}` });
          const e = await runWriters(emmett, { writers, mode, seconds: profile.appendSeconds, prefix: `emmett-${writers}-${mode}` });
          const vsEmmett = round(o.eventsPerSecond / e.eventsPerSecond, 2);
          log(`append ${writers}w ${mode}: ours ${round(o.eventsPerSecond)}/s, emmett ${round(e.eventsPerSecond)}/s, pgbench ${round(ceiling)}/s`);
          out[`append pg ${writers}w ${mode}`] = judge({
            value: round(o.eventsPerSecond), unit: 'events/s', ceiling: round(ceiling), ceilingName: `pgbench single-row INSERT -c ${writers}`,
            details: { ours: fig(o), emmett: fig(e), ratioVsEmmett: vsEmmett, pgbenchTps: round(ceiling) },
          });
          // Target: at 16 writers, at least twice the Emmett peer (its own row, ratio vs Emmett).
          if (writers === 16) {
            out[`append pg 16w ${mode} vs emmett`] = judge({
              value: round(o.eventsPerSecond), unit: 'events/s', ceiling: round(e.eventsPerSecond), ceilingName: 'Emmett PostgreSQL event store (peer)',
              target: { on: 'ratio', op: '>=', bound: 2 }, details: { emmettConflicts: e.conflicts, oursConflicts: o.conflicts },
            });
          }
        }
      }
    } finally {
      await emmett.close();
      await ours.close();
    }
  } finally {
    await db.drop();
  }

  await withEmbeddedDatabase('append', async (url) => {
    const embedded = await ourAppender({ databaseUrl: url });
    try {
      for (const writers of WRITERS) {
        const ceiling = await embeddedInsert(url, writers, profile.appendSeconds);
        for (const mode of MODES) {
          const o = await runWriters(embedded, { writers, mode, seconds: profile.appendSeconds, prefix: `emb-${writers}-${mode}` });
          log(`append embedded ${writers}w ${mode}: ours ${round(o.eventsPerSecond)}/s, embedded PostgreSQL INSERT ${round(ceiling)}/s`);
          out[`append embedded ${writers}w ${mode}`] = judge({
            value: round(o.eventsPerSecond), unit: 'events/s', ceiling: round(ceiling), ceilingName: `embedded PostgreSQL single-row INSERT x${writers}`,
            details: { ours: fig(o) },
          });
        }
      }
    } finally {
      await embedded.close();
    }
  });
  return out;
}
