// The wallet takes snapshots (issue 32): a merchant's wallet, however long its history, loads from
// its latest snapshot and the events after it, to the same state as folding every event (balances
// and open holds, bigints included), and the audit checks its snapshots against the events.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { Aggregates } from '../commands/aggregates.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { systemClock } from '../infra/clock.ts';
import { fold } from '../domain/decider.ts';
import { walletDecider, type WalletEvent } from '../domain/wallet.ts';
import { runAudit } from '../projections/finance-audit.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

t.comment(`on ${dbLabel}`);

t.test('a long wallet loads from its snapshot and its tail, to the full fold; the audit checks the snapshot', async (t) => {
  const tdb = await testDatabase();
  const store = new PostgresEventStore(tdb.db, systemClock);
  t.teardown(async () => { await store.close(); await tdb.teardown(); });
  const every = walletDecider.snapshot!.every;
  const merchantId = randomUUID();
  const id = `wallet-${merchantId}-XOF`;
  const target = { merchantId, currency: 'XOF', at: '2026-01-01T00:00:00.000Z' };
  const agg = new Aggregates(store);
  const run = (command: Parameters<typeof walletDecider.decide>[0]) => agg.execute(id, walletDecider, command, {});
  for (let i = 0; i < every + 3; i++) {
    await run({ type: 'TopUp', data: { ...target, entryId: randomUUID(), amount: 1_000n + BigInt(i) } });
    if (i === 10) await run({ type: 'Hold', data: { ...target, holdId: 'h-open', amount: 500n, reference: { type: 'payout', id: 'p-1' } } });
  }
  const snap = await waitUntil(`the snapshot of ${id} written`, () => store.readSnapshot(id));
  t.ok(snap, 'a snapshot was written');
  t.equal(snap!.shape, walletDecider.snapshot!.shape);

  const froms: number[] = [];
  const readStream = store.readStream.bind(store);
  store.readStream = (s, from, to) => { froms.push(from ?? 1); return readStream(s, from, to); };
  const loaded = await new Aggregates(store).load(id, walletDecider);
  t.same(froms, [snap!.version + 1], 'only the events after the snapshot are read');
  const full = fold(walletDecider, (await readStream(id)) as unknown as WalletEvent[]);
  t.strictSame(loaded.state, full, 'the state from the snapshot and its tail is the full fold');
  t.equal(Object.keys(loaded.state.holds).length, 1, 'the open hold is in it');

  const audit = await runAudit(tdb.db.knex, store, []);
  t.same({ checked: audit.snapshots.checked, mismatched: audit.snapshots.mismatched }, { checked: 1, mismatched: 0 }, 'the audit checked it');
  await tdb.db.knex.raw(`UPDATE snapshots SET state = jsonb_set(state, '{holds}', '{}') WHERE stream_id = ?`, [id]);
  const tampered = await runAudit(tdb.db.knex, store, []);
  t.equal(tampered.snapshots.mismatched, 1, 'a snapshot that lost the open hold is a finding');
  t.equal(tampered.ok, false);
});
