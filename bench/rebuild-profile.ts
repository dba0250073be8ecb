// Rebuilds the money projection on a bench database, in this process of its own: the bench's
// rebuild scenario runs it (`--json`: one line of JSON), and so can you on a kept database
// (BENCH_KEEP_DB=1 npm run bench -- --only=rebuild prints its name), with or without a profile:
// `node [--cpu-prof] --import tsx bench/rebuild-profile.ts <url>`.
import { measureRebuild } from './lib/rebuild-measure.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: rebuild-profile.ts <database url> [--json]');
const m = await measureRebuild(url);
if (process.argv.includes('--json')) console.log(JSON.stringify(m));
else {
  console.log(`${m.events} events in ${m.elapsedMs} ms (replayed in ${Math.round(m.replayMs)} ms): ${Math.round((m.events * 1000) / m.elapsedMs)} events/s; ` +
    `reading them alone ${Math.round(m.readEps)} events/s`);
}
