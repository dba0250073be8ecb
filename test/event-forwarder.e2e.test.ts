// The event forwarder on a bus that can lose its server (like NATS, which acknowledges a publish
// before it is on disk): the checkpoint moves only past what was published PUBLISH_SAFETY_MARGIN_MS
// ago under an unchanged bus generation, and when the generation changes the forwarder re-sends
// everything after its saved checkpoint. No NATS needed: the bus here is the in-process one behind
// a generation counter the test moves.
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../infra/config.ts';
import { startApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { MemoryBus } from '../infra/bus/memory.ts';
import type { Bus, Consumer, ConsumerOptions } from '../infra/bus/types.ts';
import { readCheckpoint } from '../infra/checkpoints.ts';
import { FORWARDER, PUBLISH_SAFETY_MARGIN_MS } from '../workers/event-forwarder.ts';
import { testDatabase } from './helpers/db.ts';
import { waitFor } from './helpers/bus-contract.ts';

/** The in-process bus, plus a generation the test bumps to play "the server was lost". */
class LosableBus implements Bus {
  readonly name = 'losable';
  private readonly inner = new MemoryBus();
  private lost = 0;
  readonly published = new Map<string, number>();

  async publish(subject: string, id: string, data: unknown): Promise<void> {
    this.published.set(id, (this.published.get(id) ?? 0) + 1);
    await this.inner.publish(subject, id, data);
  }
  consume(opts: ConsumerOptions): Promise<Consumer> {
    return this.inner.consume(opts);
  }
  deadLetterSubject(durable: string): string {
    return this.inner.deadLetterSubject(durable);
  }
  healthy(): Promise<boolean> {
    return this.inner.healthy();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  generation(): number {
    return this.lost;
  }
  loseServer(): void {
    this.lost++;
  }
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-fwd-'));
const tdb = await testDatabase();
const bus = new LosableBus();
// BUS_FORWARD=all: the test's own event type is consumed by no worker of the service.
const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: 'forwarder-test-token', LOG_LEVEL: 'silent', BUS_FORWARD: 'all' }, ['--role', 'worker']);
const app = await startApp({ config: { ...config, databaseUrl: tdb.url }, database: tdb.db, bus, log: createLogger('silent'), port: 0 });
t.teardown(async () => {
  await app.stop();
  await tdb.teardown();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const checkpoint = () => readCheckpoint(app.services.knex, FORWARDER);
const appendThree = async () => {
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  const r = await app.services.store.append([{
    streamId: `forwarder-test-${randomUUID()}`, expectedVersion: 0,
    events: ids.map((id, i) => ({ id, type: 'forwarder.tested', data: { i } })),
  }]);
  return { ids, position: r.position };
};

t.test('the checkpoint passes a published event only after the safety margin', async (t) => {
  const { ids, position } = await appendThree();
  await waitFor('the publish', () => ids.every((id) => bus.published.has(id)));
  const publishedAt = Date.now();
  t.ok(await checkpoint() < position, 'not saved right after the acknowledgement');
  await waitFor('the checkpoint saved past the batch once the margin passed', async () => (await checkpoint()) >= position);
  t.ok((await checkpoint()) >= position, 'saved once the margin passed');
  t.ok(Date.now() - publishedAt >= PUBLISH_SAFETY_MARGIN_MS - 300, 'and not much before');
});

t.test('when the bus loses its server, what was not yet safe is sent again, and only that', async (t) => {
  const settled = await appendThree();
  await waitFor('the first publish', () => settled.ids.every((id) => bus.published.has(id)));
  await waitFor('the checkpoint past the first events', async () => (await checkpoint()) >= settled.position);
  t.ok((await checkpoint()) >= settled.position, 'the first events are behind the checkpoint');

  const fresh = await appendThree();
  await waitFor('the second publish', () => fresh.ids.every((id) => bus.published.has(id)));
  const readers = app.services.merchantVersions.readerCount;
  bus.loseServer(); // within the margin: the server may have lost them
  await waitFor('the re-send', () => fresh.ids.every((id) => bus.published.get(id) === 2));
  t.same(fresh.ids.map((id) => bus.published.get(id)), [2, 2, 2], 'the unsafe events were sent again');
  t.same(settled.ids.map((id) => bus.published.get(id)), [1, 1, 1], 'what the checkpoint covered was not');
  t.equal(app.services.merchantVersions.readerCount, readers, 'the rewound subscription\'s reader of the global order was dropped for the new one\'s');
  await waitFor('the checkpoint past the re-sent events', async () => (await checkpoint()) >= fresh.position);
  t.ok((await checkpoint()) >= fresh.position, 'the checkpoint moves on after the re-send');
});
