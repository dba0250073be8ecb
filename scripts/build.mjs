// `npm run build`: the service's TypeScript compiled to dist/ (what bin/service runs), with the
// dashboard's and the payer's page's static files beside the code that serves them. The build is made in a directory of
// its own and then put in place of dist/ by two renames: a module removed from the sources cannot linger,
// and a service started from dist/ (or a second `npm start`, building at the same time for another
// role) never finds it half-written or missing.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const next = `${dist}.building-${process.pid}`;
const old = `${dist}.old-${process.pid}`;
fs.rmSync(next, { recursive: true, force: true });
try {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', next], { stdio: 'inherit' });
  fs.cpSync(path.join(root, 'dashboard/static'), path.join(next, 'dashboard/static'), { recursive: true });
  fs.cpSync(path.join(root, 'pay/static'), path.join(next, 'pay/static'), { recursive: true });
  // Another build may put its own dist/ in place between the two renames: move that one aside too.
  for (let attempt = 1; ; attempt++) {
    try {
      fs.renameSync(dist, `${old}-${attempt}`);
    } catch (err) {
      if (err.code !== 'ENOENT') throw err; // ENOENT: no build there
    }
    try {
      fs.renameSync(next, dist);
      break;
    } catch (err) {
      if ((err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') || attempt >= 10) throw err;
    }
  }
} finally {
  fs.rmSync(next, { recursive: true, force: true });
  for (const f of fs.readdirSync(root)) {
    if (f.startsWith(`${path.basename(old)}-`)) fs.rmSync(path.join(root, f), { recursive: true, force: true });
  }
}
