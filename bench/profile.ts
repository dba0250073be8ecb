// `npx tsx bench/profile.ts [transfer-e2e]`: runs payin-create (or transfer-e2e) with the service
// under `node --cpu-prof` and prints where its CPU time went (self time by function and by file).
// The analysis is in bench/PROFILE.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { payinCreate } from './scenarios/payin-create.ts';
import { transferE2e } from './scenarios/transfer-e2e.ts';
import { PROFILES } from './lib/profile.ts';
import { aggregate } from './lib/cpuprofile.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-prof-'));
const nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${dir}`];
if (process.argv[2] === 'transfer-e2e') {
  const r = await transferE2e(PROFILES.quick, { nodeArgs });
  console.log(`transfer-e2e under --cpu-prof: p50 ${r['transfer-e2e p50']!.value} ms, p99 ${r['transfer-e2e p99']!.value} ms, ${JSON.stringify(r['transfer-e2e p99']!.details)}`);
} else {
  const r = await payinCreate(PROFILES.quick, { nodeArgs });
  console.log(`payin-create under --cpu-prof: ${r['payin-create']!.value} creates/s, p99 ${r['payin-create p99']!.value} ms (ceiling ${r['payin-create']!.ceiling})`);
}
for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))) {
  const a = aggregate(path.join(dir, f), Number(process.env.TOP ?? 30));
  console.log(`\n${path.join(dir, f)}: ${a.totalMs} ms sampled\n\nself time by file:`);
  for (const row of a.byFile) console.log(`${String(row.pct).padStart(5)}%  ${String(row.ms).padStart(6)} ms  ${row.name}`);
  console.log('\nself time by function:');
  for (const row of a.byFunction) console.log(`${String(row.pct).padStart(5)}%  ${String(row.ms).padStart(6)} ms  ${row.name}`);
}
