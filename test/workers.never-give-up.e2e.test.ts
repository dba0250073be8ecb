// Triggers that move money or record a merchant's webhook are never dead-lettered: they are
// retried, with capped backoff, past the bus's default delivery limit until they succeed.
import t from 'tap';
import { MemoryBus } from '../infra/bus/memory.ts';
import { DEFAULT_MAX_DELIVER, type ConsumerOptions } from '../infra/bus/types.ts';
import { neverGiveUp } from '../workers/never-give-up.ts';
import { createLogger } from '../infra/log.ts';
import { GATEWAY } from '../commands/leg-checks.ts';
import { WEBHOOK_RECORDER } from '../workers/webhooks/index.ts';
import { startTestApp } from './helpers/app.ts';

t.test('a handler failing far past the default delivery limit is still retried, then succeeds', async (t) => {
  const bus = new MemoryBus();
  t.teardown(() => bus.close());
  const failures = DEFAULT_MAX_DELIVER + 10;
  let calls = 0;
  let done!: () => void;
  const handled = new Promise<void>((r) => (done = r));
  const consumer = await bus.consume(neverGiveUp(createLogger('silent'), {
    durable: 'stubborn', subjects: ['work.>'], backoffMs: () => 1,
    handler: async () => {
      calls++;
      if (calls <= failures) throw new Error('provider down');
      done();
    },
  }));
  t.teardown(() => consumer.stop());
  await bus.publish('work.one', 'm-1', {});
  await handled;
  t.equal(calls, failures + 1, `delivered ${failures + 1} times`);
  t.same(bus.deadLetters, [], 'nothing dead-lettered');
});

t.test('the provider gateway, the transfer saga and the webhook recorder never dead-letter', async (t) => {
  const seen = new Map<string, ConsumerOptions>();
  class RecordingBus extends MemoryBus {
    override async consume(opts: ConsumerOptions) {
      seen.set(opts.durable, opts);
      return super.consume(opts);
    }
  }
  const h = await startTestApp({ bus: new RecordingBus() });
  t.teardown(() => h.stop());
  for (const durable of [GATEWAY, 'transfer-saga', WEBHOOK_RECORDER]) {
    t.equal(seen.get(durable)?.maxDeliver, Number.POSITIVE_INFINITY, `${durable}: unlimited deliveries`);
  }
});
