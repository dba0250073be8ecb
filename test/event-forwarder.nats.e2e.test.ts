// The whole chain on a real NATS crash: event store → forwarder → NATS (kill -9, restart on the same
// port and store) → a durable consumer. Every event appended before, during and after the crash
// reaches the consumer: what NATS acknowledged but lost is re-sent by the forwarder from its
// checkpoint when the bus reports it lost its server. Needs NATS_URL (the NATS test suite) and a
// nats-server binary for the private server.
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { loadConfig } from '../infra/config.ts';
import { startApp } from '../app/app.ts';
import { createLogger } from '../infra/log.ts';
import { NatsBus } from '../infra/bus/nats.ts';
import type { ForwardedEvent } from '../infra/bus/forwarded-event.ts';
import { testDatabase } from './helpers/db.ts';
import { sleep, waitFor } from './helpers/bus-contract.ts';
import { PrivateNatsServer, natsServerBinary } from './helpers/nats-server.ts';

const bin = natsServerBinary();

if (!process.env.NATS_URL) {
  t.skip('NATS_URL not set: the NATS forwarder crash test runs with the NATS test suite (and a nats-server binary)', () => {});
} else if (!bin) {
  t.skip('no nats-server binary (set NATS_SERVER_BIN): the crash test starts a private server', () => {});
} else {
  t.test('kill -9 of NATS while events are forwarded: the consumer still gets every event', async (t) => {
    const server = await PrivateNatsServer.start(bin);
    t.teardown(() => server.stop());
    const prefix = `f${randomBytes(4).toString('hex')}`;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-fwd-nats-'));
    const tdb = await testDatabase();
    t.teardown(async () => {
      await tdb.teardown();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const config = loadConfig({
      DATA_DIR: dataDir, ADMIN_TOKEN: 'forwarder-nats-test', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      NATS_URL: server.url, NATS_PREFIX: prefix, BUS_FORWARD: 'all', // the audit tap reads every event
    }, ['--role', 'worker']);
    // The audit consumer is another process's view of the same deployment (same prefix).
    const audit = await NatsBus.connect({ url: server.url, prefix, ackWaitMs: 3_000, pullExpiresMs: 2_000 });
    t.teardown(() => audit.close());
    const received = new Set<string>();
    await audit.consume({
      durable: 'audit', subjects: ['events.>'], concurrency: 4,
      handler: async (m) => { received.add((m.data as ForwardedEvent).id); },
    });
    const app = await startApp({ config: { ...config, databaseUrl: tdb.url }, database: tdb.db, log: createLogger(config.logLevel), port: 0 });
    t.teardown(() => app.stop());
    t.equal(app.services.bus.name, 'nats', 'NATS_URL set: the service runs on NATS');

    const appended: string[] = [];
    const append = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const id = randomUUID();
        await app.services.store.append([{ streamId: `crash-${randomUUID()}`, expectedVersion: 0, events: [{ id, type: 'crash.tested', data: { i } }] }]);
        appended.push(id);
      }
    };
    await append(150);
    await waitFor('the forwarding to start', () => received.size > 0);
    const generation = (app.services.bus as NatsBus).generation();
    await server.kill9(); // mid-stream: some events published, some acknowledged but not on disk, some not sent
    const during = append(50); // appended while NATS is down
    await sleep(500);
    await server.start();
    await during;
    await waitFor('the service bus to notice the loss', () => (app.services.bus as NatsBus).generation() > generation);
    await append(50);
    await waitFor('every event at the consumer', () => appended.every((id) => received.has(id)));
    t.equal(appended.filter((id) => !received.has(id)).length, 0, `all ${appended.length} events delivered`);
    await waitFor('the bus healthy again', () => app.services.bus.healthy());
    t.equal(await app.services.bus.healthy(), true, 'ready again');
  });
}
