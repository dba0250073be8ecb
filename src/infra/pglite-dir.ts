// An embedded database directory, created on first use by a short-lived child process, so the
// service never holds the memory of PGlite's initdb (pglite-initdb-child.ts). The child builds the
// database beside the directory and it is renamed into place once complete: a process killed
// part-way leaves no half-built database behind, only a scratch directory the next start removes.
// (Like PGlite itself, which runs PostgreSQL with fsync off, this does not flush to disk: the
// embedded mode survives a killed process, not a power cut.)
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The child is this module's sibling: TypeScript (run through tsx, found by its resolved location
// whatever the working directory) when the service runs from src/, JavaScript when it runs from the
// build (dist/, bin/service).
const HERE = fileURLToPath(import.meta.url);
const CHILD = path.join(path.dirname(HERE), `pglite-initdb-child${path.extname(HERE)}`);
const CHILD_ARGS = path.extname(HERE) === '.ts' ? ['--import', import.meta.resolve('tsx'), CHILD] : [CHILD];

/** PostgreSQL writes PG_VERSION into a data directory that initdb completed. */
export function pgliteDirInitialised(dir: string): boolean {
  return fs.existsSync(path.join(dir, 'PG_VERSION'));
}

function runChild(target: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...CHILD_ARGS, target], { maxBuffer: 4 * 1024 * 1024 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`creating the embedded database in ${target} failed: ${err.message}\n${stderr.slice(-2000)}`));
      else resolve();
    });
  });
}

/**
 * Makes `dir` an initialised PGlite data directory. The caller holds the directory's lock, so no
 * other process is creating it at the same time. A directory that exists without PG_VERSION must be
 * empty (an empty one is replaced); anything else there is refused rather than overwritten.
 */
export async function ensurePgliteDir(dir: string): Promise<void> {
  if (pgliteDirInitialised(dir)) return;
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) {
    throw new Error(`${dir} is not empty and holds no embedded database (no PG_VERSION): refusing to create one over it`);
  }
  const scratch = `${dir}.initdb`;
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  await runChild(scratch);
  if (!pgliteDirInitialised(scratch)) throw new Error(`creating the embedded database in ${scratch} left no PG_VERSION`);
  if (fs.existsSync(dir)) fs.rmdirSync(dir); // empty, checked above (rmdir fails on anything else)
  fs.renameSync(scratch, dir);
}
