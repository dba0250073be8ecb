// `npm run build`: the service's TypeScript compiled to dist/ (what bin/service runs), with the
// dashboard's and the payer's page's static files beside the code that serves them.
//
// The build is made in a directory of its own. When it equals what dist/ holds (a second `npm start`
// building the same sources for another role, the bench's build beside a service already running),
// dist/ is left as it is: swapping it, even by renames, leaves an instant with no dist/, and a
// service loading its modules at that instant fails to start. When it differs, it is put in place of
// dist/ by two renames, so a module removed from the sources cannot linger and a service never finds
// dist/ half-written.
//
// `--out-dir DIR` builds into DIR instead of dist/ (the same rules).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outArg = process.argv.indexOf('--out-dir');
const dist = outArg >= 0 ? path.resolve(process.argv[outArg + 1]) : path.join(root, 'dist');
const next = `${dist}.building-${process.pid}`;
const old = `${dist}.old-${process.pid}`;

/** Every file under `dir`, as paths relative to it, sorted (walked by hand: recursive readdir with file types missed entries in Node 20.5, nodejs/node#49299). */
function filesOf(dir, prefix = '') {
  const files = [];
  for (const e of fs.readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = path.join(prefix, e.name);
    if (e.isDirectory()) files.push(...filesOf(dir, rel));
    else files.push(rel);
  }
  return files.sort();
}

/** True when `a` and `b` hold the same files with the same bytes. */
function sameTree(a, b) {
  if (!fs.existsSync(b)) return false;
  const files = filesOf(a);
  const others = filesOf(b);
  if (files.length !== others.length || files.some((f, i) => f !== others[i])) return false;
  return files.every((f) => fs.readFileSync(path.join(a, f)).equals(fs.readFileSync(path.join(b, f))));
}

/** Puts `next` in place of `dist` by two renames (another build may put its own in between: moved aside too). */
function replaceDist() {
  for (let attempt = 1; ; attempt++) {
    try {
      fs.renameSync(dist, `${old}-${attempt}`);
    } catch (err) {
      if (err.code !== 'ENOENT') throw err; // ENOENT: no build there
    }
    try {
      fs.renameSync(next, dist);
      return;
    } catch (err) {
      if ((err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') || attempt >= 10) throw err;
    }
  }
}

fs.rmSync(next, { recursive: true, force: true });
try {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', next], { stdio: 'inherit' });
  fs.cpSync(path.join(root, 'dashboard/static'), path.join(next, 'dashboard/static'), { recursive: true });
  fs.cpSync(path.join(root, 'pay/static'), path.join(next, 'pay/static'), { recursive: true });
  if (!sameTree(next, dist)) replaceDist();
} finally {
  fs.rmSync(next, { recursive: true, force: true });
  const parent = path.dirname(dist);
  for (const f of fs.readdirSync(parent)) {
    if (f.startsWith(`${path.basename(old)}-`)) fs.rmSync(path.join(parent, f), { recursive: true, force: true });
  }
}
