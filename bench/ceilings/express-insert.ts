// The payin-create ceiling: a bare Express 5 server doing one durable pg INSERT per request (same
// pool size as the service's default), run as its own process by bench/scenarios/payin-create.ts.
// PORT and DATABASE_URL come from the environment (the machine's PostgreSQL, or for the embedded
// variant a database on an embedded PostgreSQL the scenario started); GET /healthz answers once
// the table exists.
import { randomUUID } from 'node:crypto';
import express from 'express';
import pg from 'pg';

if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL is required');
const db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
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
