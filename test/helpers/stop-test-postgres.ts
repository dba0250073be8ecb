// tap's `after` hook, for tap run on its own: stops the embedded lane's PostgreSQL
// (test/helpers/db.ts) once every test file has run. Its data stays (with the migrated template), so
// the next run starts it in a fraction of a second. `npm test` stops the server of its own run.
import { stopEmbeddedPostgres } from '../../infra/embedded-postgres.ts';
import { TEST_SERVER_DIR, realPostgres } from './db.ts';

if (!realPostgres && !process.env.MPA_TEST_PG_DIR) await stopEmbeddedPostgres(TEST_SERVER_DIR);
