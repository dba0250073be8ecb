// The forwarder notes the merchant streams' versions (SeenVersions) before it publishes a batch: a
// consumer given an event may rely on this process having read the global order up to it (the
// webhook recorder takes the merchant's URL from its cache on that basis: webhooks.target-as-of).
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../infra/config.ts';
import { startApp, type RunningApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { MemoryBus } from '../infra/bus/memory.ts';
import { testDatabase } from './helpers/db.ts';
import { waitUntil } from './helpers/wait.ts';

/** The in-process bus, noting at each publish how far the service has read the global order. */
class WatchingBus extends MemoryBus {
  app: RunningApp | undefined;
  readonly seen: Array<{ position: bigint; readTo: bigint; merchantVersion: number }> = [];
  override async publish(subject: string, id: string, data: unknown): Promise<void> {
    const v = this.app?.services.merchantVersions;
    const position = BigInt((data as { position: string }).position);
    if (v) this.seen.push({ position, readTo: v.position, merchantVersion: v.latest(merchantStream) });
    await super.publish(subject, id, data);
  }
}

const merchantStream = `merchant-${randomUUID()}`;

t.test('every event is published after the merchant versions up to it were noted', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-fwd-seen-'));
  const tdb = await testDatabase();
  const bus = new WatchingBus();
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: 'forwarder-seen-token', LOG_LEVEL: 'silent' }, ['--role', 'worker']);
  const app = await startApp({ config: { ...config, databaseUrl: tdb.url }, database: tdb.db, bus, log: createLogger('silent'), port: 0 });
  bus.app = app;
  t.teardown(async () => {
    await app.stop();
    await tdb.teardown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  await app.services.projector.stop(); // the forwarder alone reads the global order now
  const s = app.services;
  await s.store.append([{ streamId: merchantStream, expectedVersion: 0, events: [{ type: 'merchant.status_changed', data: { status: 'active', at: new Date().toISOString() } }] }]);
  await s.store.append([{ streamId: merchantStream, expectedVersion: 1, events: [{ type: 'merchant.status_changed', data: { status: 'active', at: new Date().toISOString() } }] }]);
  // A consumed type (the recorder ignores it: no webhook resource on this stream).
  const r = await s.store.append([{ streamId: `other-${randomUUID()}`, expectedVersion: 0, events: [{ type: 'payin.completed', data: {} }] }]);
  const published = await waitUntil('the event published', () => bus.seen.find((x) => x.position === r.position));
  t.ok(published, 'the event was published');
  t.ok(published!.readTo >= r.position, 'read up to it before it was published');
  t.equal(published!.merchantVersion, 2, 'with the merchant stream\'s newest version before it');
});
