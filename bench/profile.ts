// `npx tsx bench/profile.ts`: runs payin-create with the service under `node --cpu-prof` and prints
// where its CPU time went (self time by function and by file). The analysis is in bench/PROFILE.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { payinCreate } from './scenarios/payin-create.ts';
import { PROFILES } from './lib/profile.ts';
import { aggregate } from './lib/cpuprofile.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-prof-'));
const r = await payinCreate(PROFILES.quick, { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
console.log(`payin-create under --cpu-prof: ${r['payin-create']!.value} creates/s, p99 ${r['payin-create p99']!.value} ms (ceiling ${r['payin-create']!.ceiling})`);
for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))) {
  const a = aggregate(path.join(dir, f), Number(process.env.TOP ?? 30));
  console.log(`\n${path.join(dir, f)}: ${a.totalMs} ms sampled\n\nself time by file:`);
  for (const row of a.byFile) console.log(`${String(row.pct).padStart(5)}%  ${String(row.ms).padStart(6)} ms  ${row.name}`);
  console.log('\nself time by function:');
  for (const row of a.byFunction) console.log(`${String(row.pct).padStart(5)}%  ${String(row.ms).padStart(6)} ms  ${row.name}`);
}
