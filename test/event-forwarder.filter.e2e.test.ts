// The forwarder publishes only the event types some worker of the service consumes (BUS_FORWARD,
// default `consumed`): a payin's quote and wallet events no longer cross the bus for no reader. The
// checkpoint still moves past the skipped events, and BUS_FORWARD=all publishes everything.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig, ConfigError } from '../infra/config.ts';
import { startApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { MemoryBus } from '../infra/bus/memory.ts';
import { workers } from '../app/registry.ts';
import { readCheckpoint } from '../infra/checkpoints.ts';
import { FORWARDER } from '../workers/event-forwarder.ts';
import { testDatabase } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

/** The in-process bus, counting what is published by event type. */
class CountingBus extends MemoryBus {
  readonly types: string[] = [];
  override async publish(subject: string, id: string, data: unknown): Promise<void> {
    this.types.push((data as { type: string }).type);
    await super.publish(subject, id, data);
  }
}

async function run(t: Test, forward: string | undefined) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-fwd-filter-'));
  const tdb = await testDatabase();
  const bus = new CountingBus();
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: 'forwarder-filter-token', LOG_LEVEL: 'silent', ...(forward ? { BUS_FORWARD: forward } : {}) }, ['--role', 'worker']);
  const app = await startApp({ config: { ...config, databaseUrl: tdb.url }, database: tdb.db, bus, log: createLogger('silent'), port: 0 });
  t.teardown(async () => {
    await app.stop();
    await tdb.teardown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const r = await app.services.store.append([{
    streamId: `filter-${randomUUID()}`, expectedVersion: 0,
    // payin.completed on a stream that is no webhook resource: its consumer (the recorder) ignores it.
    events: [{ type: 'quote.created', data: {} }, { type: 'forwarder.unread', data: {} }, { type: 'payin.completed', data: {} }],
  }]);
  // The in-process bus saves the checkpoint once every consumer has settled what it was given.
  await waitUntil('the checkpoint to pass the batch', async () => (await readCheckpoint(app.services.knex, FORWARDER)) >= r.position);
  t.ok((await readCheckpoint(app.services.knex, FORWARDER)) >= r.position, 'the checkpoint passed the batch');
  return bus.types;
}

t.test('the consumed types come from the workers themselves', async (t) => {
  const consumed = new Set(workers.flatMap((w) => w.consumes?.() ?? []));
  for (const type of ['payin.created', 'payout.created', 'transfer.created', 'transfer.collection_started', 'transfer.payout.started', 'payin.completed', 'transfer.completed', 'customer.kyc_submitted']) {
    t.ok(consumed.has(type), `${type} is consumed`);
  }
  t.notOk(consumed.has('quote.created'), 'quote.created is read by no worker');
  t.notOk(consumed.has('wallet.credited'), 'nor wallet.credited');
});

t.test('default: only consumed types are published; the checkpoint moves past the others', async (t) => {
  const types = await run(t, undefined);
  t.same(types, ['payin.completed'], 'payin.completed published, quote.created and forwarder.unread not');
});

t.test('BUS_FORWARD=all: every event is published', async (t) => {
  const types = await run(t, 'all');
  t.same(types, ['quote.created', 'forwarder.unread', 'payin.completed']);
});

t.test('BUS_FORWARD takes consumed or all', async (t) => {
  let error: unknown;
  try {
    loadConfig({ ADMIN_TOKEN: 'x', BUS_FORWARD: 'some' }, []);
  } catch (err) {
    error = err;
  }
  t.ok(error instanceof ConfigError, 'another value is refused at start');
  t.equal(loadConfig({ ADMIN_TOKEN: 'x' }, []).busForward, 'consumed', 'consumed by default');
});
