// Profiles a projection rebuild on a kept bench database (BENCH_KEEP_DB=1 npm run bench --
// --only=rebuild prints its name): `node --cpu-prof --import tsx bench/rebuild-profile.ts <url>`.
// Prints the rebuild's rate and, with --cpu-prof, the profile's self time by function and by file.
import { ourAppender } from './ceilings/ours.ts';
import { rebuildProjection } from '../src/projections/rebuild.ts';
import { moneyProjection } from '../src/projections/money.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: rebuild-profile.ts <database url>');
const ours = await ourAppender({ databaseUrl: url });
try {
  const r = await rebuildProjection(ours.db.knex, ours.store, moneyProjection);
  console.log(`${r.events} events in ${r.elapsedMs} ms: ${Math.round((r.events * 1000) / r.elapsedMs)} events/s`);
} finally {
  await ours.close();
}
