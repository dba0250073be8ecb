// `npx tsx bench/statements.ts`: counts the SQL statements one quote + payin pair costs, the requests
// and the background work they set off together. The service runs on a scratch database with
// log_statement = 'all'; PAIRS pairs are sent at 64 connections, then SETTLE_S seconds for the
// background work; the server log is grouped by statement (bench/PROFILE.md explains the method).
import fs from 'node:fs';
import pg from 'pg';
import { createDatabase } from './lib/database.ts';
import { startService } from './lib/service.ts';
import { asMerchant, newMerchant, createPayin, TRANSFER_CORRIDORS, transferBody, transferQuoteBody } from './lib/api.ts';
import { startReceiver } from './lib/receiver.ts';
import { load } from './lib/load.ts';
import { payinRequests } from './scenarios/payin-create.ts';

const PAIRS = Number(process.env.PAIRS ?? 640);
const SETTLE_S = Number(process.env.SETTLE_S ?? 8);
const LOG = process.env.PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';
/** MODE=transfer: TRANSFERS transfers at 20/s (SANDBOX_SETTLE_MS=0, webhooks to a local receiver), counted per transfer. */
const MODE = process.env.MODE ?? 'payin';
const TRANSFERS = Number(process.env.TRANSFERS ?? 200);

const db = await createDatabase('stmts');
{
  // Set before the service connects, so every pool connection logs.
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  await c.query(`ALTER DATABASE ${db.name} SET log_statement = 'all'`);
  await c.end();
}
const rx = MODE === 'transfer' ? await startReceiver() : undefined;
const svc = await startService({ databaseUrl: db.url, label: 'statements', ...(rx ? { env: { SANDBOX_SETTLE_MS: '0' } } : {}) });
let units = PAIRS;
try {
  let from: number;
  if (rx) {
    const m = await newMerchant(svc.url, 'Statement count', { corridors: TRANSFER_CORRIDORS, topUp: { XOF: '1000000' }, topUps: Math.ceil((TRANSFERS + 10) / 900), webhookUrl: rx.url });
    const quotes: string[] = [];
    for (let i = 0; i < TRANSFERS; i++) quotes.push((await asMerchant(svc.url, m, 'POST', '/quotes/transfer', transferQuoteBody)).body.id);
    await new Promise((r) => setTimeout(r, 2000));
    from = fs.statSync(LOG).size;
    const inflight: Array<Promise<unknown>> = [];
    for (const q of quotes) {
      inflight.push(asMerchant(svc.url, m, 'POST', '/transfers', transferBody(q, m.customerId)));
      await new Promise((r) => setTimeout(r, 50));
    }
    await Promise.all(inflight);
    units = TRANSFERS;
  } else {
    const m = await newMerchant(svc.url, 'Statement count');
    await createPayin(svc.url, m);
    await new Promise((r) => setTimeout(r, 2000));
    from = fs.statSync(LOG).size;
    const lr = await load({ url: svc.url, connections: 64, amount: PAIRS * 2, seconds: 60, requests: payinRequests(m) as any });
    console.log(`load: ${lr.ok} of ${lr.requests} answered 2xx in ${Math.round(lr.durationMs)} ms`);
  }
  await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
  await svc.stop();
  await rx?.close();
  const text = fs.readFileSync(LOG, 'utf8').slice(from);
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.includes(`@${db.name} `)) continue;
    const m2 = /(?:statement|execute [^:]*): (.*)$/.exec(line);
    if (!m2) continue;
    const key = m2[1]!.replace(/\$\d+/g, '$').replace(/'[^']*'/g, "'…'").slice(0, 110);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  console.log(`${total} statements for ${units} ${MODE === 'transfer' ? 'transfers' : 'pairs'}: ${(total / units).toFixed(2)} each`);
  for (const [k, v] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 50)) console.log(`${(v / units).toFixed(2).padStart(6)}  ${k}`);
} finally {
  await db.drop();
}
