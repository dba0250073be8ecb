// The payin-create ceiling: a bare Express 5 server doing one durable pg INSERT per request (same
// pool size as the service's default), run as its own process by bench/scenarios/payin-create.ts.
// PORT and DATABASE_URL come from the environment (PGLITE_DIR instead: the embedded ceiling, one
// INSERT into PGlite); GET /healthz answers once the table exists.
import { randomUUID } from 'node:crypto';
import express from 'express';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';

type Db = { query(q: { name: string; text: string; values: unknown[] } | string): Promise<{ rows: unknown[] }>; end(): Promise<void> };
let db: Db;
if (process.env.PGLITE_DIR) {
  const lite = new PGlite(process.env.PGLITE_DIR);
  db = { query: (q) => (typeof q === 'string' ? lite.query(q) : lite.query(q.text, q.values)), end: () => lite.close() };
} else {
  db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 }) as unknown as Db;
}
await db.query('CREATE TABLE IF NOT EXISTS ceiling_items (id uuid PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');

const app = express();
app.use(express.json());
app.get('/healthz', (_req, res) => { res.json({ status: 'ok' }); });
app.post('/items', async (req, res) => {
  const r = await db.query({
    name: 'ceiling-insert',
    text: 'INSERT INTO ceiling_items (id, body) VALUES ($1, $2) RETURNING id, created_at',
    values: [randomUUID(), req.body],
  });
  res.status(201).json(r.rows[0]);
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => { server.close(); void db.end().then(() => process.exit(0)); });
