// Runs as a process of its own (see pglite-dir.ts): creates an embedded database in the directory
// given as its only argument, then exits. PGlite's initdb runs a second WebAssembly PostgreSQL and
// copies a dump of it, which takes the process near 900 MB; WebAssembly memory is never handed back,
// so done inside the service it would stay resident for the service's whole life.
import { PGlite } from '@electric-sql/pglite';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: pglite-initdb-child <directory>\n');
  process.exit(2);
}
const db = await PGlite.create(dir);
await db.query('SELECT 1');
await db.close();
