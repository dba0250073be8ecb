// A rebuild on PostgreSQL prepares batch N + 1 while the server writes batch N (shadow.ts catchUp,
// bench issue 8): the rebuilt tables are the same, a batch is written only after the one before it
// committed, and a failed write stops the run before anything prepared after it is written.
import { createHash } from 'node:crypto';
import t from 'tap';
import type { Knex } from 'knex';
import { newCustomer, settledPayins, topUp } from './helpers/money.ts';
import { startTestApp } from './helpers/app.ts';
import { rebuildProjection } from '../projections/rebuild.ts';
import { STATE_TABLE, ShadowTakenOver } from '../projections/shadow.ts';
import { moneyProjection } from '../projections/money.ts';
import type { Projection } from '../projections/projection.ts';
import type { EventStore } from '../infra/eventstore/types.ts';

{
  const h = await startTestApp();
  t.teardown(() => h.stop());
  const s = h.app.services;
  const m = await h.newMerchant('Overlap');
  await topUp(h, m, 'XAF', '100000');
  const payer = await newCustomer(h, m);
  await settledPayins(h, m, payer, ['+237670000001', '+237670000002', '+237670000003', '+237670000004']);
  await s.awaitReadModels(await s.store.head());
  await s.projector.stop(); // from here on, only the rebuilds write the read models

  const checksums = async (knex: Knex) => {
    const out: Record<string, string> = {};
    for (const table of moneyProjection.tables) {
      const rows = (await knex(table).select('*')) as Array<Record<string, unknown>>;
      const lines = rows.map((r) => JSON.stringify(Object.keys(r).sort().map((k) => [k, r[k]]))).sort();
      out[table] = `${rows.length} ${createHash('sha256').update(lines.join('\n')).digest('hex')}`;
    }
    return out;
  };
  const before = await checksums(s.knex);
  const shadowsLeft = async () => (await s.knex.raw<{ rows: unknown[] }>(`SELECT 1 FROM information_schema.schemata WHERE schema_name LIKE 'rebuild\\_%'`)).rows.length;

  /** The money projection, logging when each batch is prepared and when its write starts and ends. */
  const logged = (log: string[], failAt?: number): Projection => {
    let n = 0;
    return {
      ...moneyProjection,
      async prepare(db, events, ctx) {
        const k = ++n;
        log.push(`prepare ${k}`);
        const write = await moneyProjection.prepare!(db, events, ctx);
        return async (tx) => {
          log.push(`write ${k}`);
          if (k === failAt) throw new Error(`write ${k} failed`);
          await write(tx);
          log.push(`written ${k}`);
        };
      },
    };
  };

  t.test('the next batch is prepared while this one is written; the tables come out the same', async (t) => {
    const log: string[] = [];
    const r = await rebuildProjection(s.knex, s.store, logged(log), undefined, 5);
    const batches = log.filter((l) => l.startsWith('prepare')).length;
    t.ok(batches > 4, `${batches} batches of 5 of ${r.events} events`);
    const overlapped = Array.from({ length: batches - 1 }, (_, i) => i + 1)
      .filter((k) => log.indexOf(`prepare ${k + 1}`) < log.indexOf(`written ${k}`));
    t.ok(overlapped.length > 0, `batch k + 1 prepared before batch k was written, for k in ${overlapped.join(', ')}`);
    for (let k = 1; k < batches; k++) {
      t.ok(log.indexOf(`written ${k}`) < log.indexOf(`write ${k + 1}`), `batch ${k + 1} written only after batch ${k}`);
    }
    t.same(await checksums(s.knex), before, 'every money table identical');
  });

  t.test('a failed write stops the rebuild: nothing prepared after it is written, the live tables are untouched', async (t) => {
    const log: string[] = [];
    await t.rejects(rebuildProjection(s.knex, s.store, logged(log, 3), undefined, 5), /write 3 failed/);
    t.notOk(log.some((l) => /^write (\d+)$/.test(l) && Number(l.split(' ')[1]) > 3), `no write after the failed one (${log.join(', ')})`);
    t.same(await checksums(s.knex), before, 'the live tables are as they were');
    t.equal(await shadowsLeft(), 0, 'no shadow schema left behind');
    await rebuildProjection(s.knex, s.store, moneyProjection, undefined, 5);
    t.same(await checksums(s.knex), before, 'the next rebuild gives the same tables');
  });

  t.test('a shadow taken over by another run mid-way: the rebuild stops, the live tables are untouched', async (t) => {
    let reads = 0;
    const meddling = Object.create(s.store) as EventStore;
    meddling.readAll = async (after, limit, opts) => {
      // Another run claims the shadow while batches are being written (as a second rebuild's
      // createShadow would, minus its DROP SCHEMA, which may deadlock with a batch's transaction
      // and fail either run, nondeterministically).
      if (reads++ === 2) await s.knex.raw(`UPDATE rebuild_money.${STATE_TABLE} SET run_id = 'another run'`);
      return s.store.readAll(after, limit, opts);
    };
    await t.rejects(rebuildProjection(s.knex, meddling, moneyProjection, undefined, 5), ShadowTakenOver);
    t.same(await checksums(s.knex), before, 'the live tables are untouched');
    await rebuildProjection(s.knex, s.store, moneyProjection, undefined, 5);
    t.equal(await shadowsLeft(), 0, 'no shadow schema left behind');
  });
}
