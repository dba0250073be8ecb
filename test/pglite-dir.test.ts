// The embedded database directory is created by a child process (infra/pglite-dir.ts): PGlite's
// initdb takes a process near 900 MB, and WebAssembly memory is never given back, so done in the
// service it stayed resident for the service's whole life (bench issue 8, embedded memory).
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensurePgliteDir, pgliteDirInitialised } from '../src/infra/pglite-dir.ts';
import { openDatabase } from '../src/infra/db.ts';

const hwmMb = () => Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

t.test('a new directory is created out of process, renamed into place, and opens', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pglite-dir-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const dir = path.join(root, 'pglite');
  const before = hwmMb();
  await ensurePgliteDir(dir);
  const grew = hwmMb() - before;
  // In this process, initdb raised the peak by 700+ MB; a child's memory is not counted here.
  t.ok(grew < 150, `this process's peak grew by ${Math.round(grew)} MB`);
  t.ok(pgliteDirInitialised(dir), 'PG_VERSION is there');
  t.notOk(fs.existsSync(`${dir}.initdb`), 'no scratch directory left');
  const db = await openDatabase({ pgliteDir: dir });
  t.teardown(() => db.close());
  const { rows } = await db.knex.raw<{ rows: { shared_buffers: string }[] }>('SHOW shared_buffers');
  t.equal(rows[0]!.shared_buffers, '16MB', 'shared buffers sized for a process that also runs the service');
});

t.test('an initialised directory is left as it is', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pglite-dir-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const dir = path.join(root, 'pglite');
  await ensurePgliteDir(dir);
  const db = await openDatabase({ pgliteDir: dir, pgliteSharedBuffersMb: 8 });
  await db.knex.raw('CREATE TABLE kept (v int)');
  await db.knex.raw('INSERT INTO kept VALUES (42)');
  const { rows: sb } = await db.knex.raw<{ rows: { shared_buffers: string }[] }>('SHOW shared_buffers');
  t.equal(sb[0]!.shared_buffers, '8MB', 'PGLITE_SHARED_BUFFERS_MB reaches PostgreSQL');
  await db.close();
  await ensurePgliteDir(dir);
  const again = await openDatabase({ pgliteDir: dir });
  t.teardown(() => again.close());
  const { rows } = await again.knex.raw<{ rows: { v: number }[] }>('SELECT v FROM kept');
  t.same(rows, [{ v: 42 }]);
});

t.test('a scratch directory left by a crash is replaced; an empty directory is filled', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pglite-dir-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const dir = path.join(root, 'pglite');
  fs.mkdirSync(dir);
  fs.mkdirSync(`${dir}.initdb/base`, { recursive: true });
  fs.writeFileSync(`${dir}.initdb/base/half-written`, 'x');
  await ensurePgliteDir(dir);
  t.ok(pgliteDirInitialised(dir));
  t.notOk(fs.existsSync(path.join(dir, 'base', 'half-written')), 'nothing of the crashed attempt inside');
  t.notOk(fs.existsSync(`${dir}.initdb`));
});

t.test('a non-empty directory that holds no database is refused and left untouched', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pglite-dir-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const dir = path.join(root, 'pglite');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine');
  await t.rejects(ensurePgliteDir(dir), { message: /not empty and holds no embedded database/ });
  t.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'mine');
  t.notOk(fs.existsSync(`${dir}.initdb`));
  // openDatabase releases the directory's lock when it refuses.
  await t.rejects(openDatabase({ pgliteDir: dir }), { message: /not empty/ });
  t.notOk(fs.existsSync(`${dir}.lock`), 'lock released');
});
