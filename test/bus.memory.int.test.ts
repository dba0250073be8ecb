// The bus contract on the in-process bus (embedded mode).
import t from 'tap';
import { MemoryBus } from '../infra/bus/memory.ts';
import { busContract, waitFor } from './helpers/bus-contract.ts';

busContract(t, {
  make: async () => {
    const bus = new MemoryBus();
    // A durable lives in this process: a "second process" sharing it is this same bus.
    return { bus, peer: async () => bus, teardown: () => bus.close() };
  },
  ackWaitMs: 0, // nothing is redelivered on a timer: a message is settled when its handler answers
  keepsMessagesWhileStopped: false,
});

t.test('in-process bus: a stopped instance hands what it still holds to another instance of its durable', async (t) => {
  const bus = new MemoryBus();
  t.teardown(() => bus.close());
  const seen: Array<{ who: string; count: number }> = [];
  let releaseFirst!: () => void;
  const firstBlocked = new Promise<void>((r) => (releaseFirst = r));
  const a = await bus.consume({
    durable: 'handover', subjects: ['h.>'],
    handler: async (m) => {
      seen.push({ who: 'a', count: m.deliveryCount });
      await firstBlocked;
      return { retryAfterMs: 300 };
    },
  });
  await bus.publish('h.x', 'm1', {});
  await bus.consume({
    durable: 'handover', subjects: ['h.>'],
    handler: async (m) => { seen.push({ who: 'b', count: m.deliveryCount }); },
  });
  const stopping = a.stop();
  const start = Date.now(); // the handler answers its retry delay after this
  releaseFirst();
  await stopping;
  await waitFor('the retry at the running instance', () => seen.length >= 2);
  t.same(seen, [{ who: 'a', count: 1 }, { who: 'b', count: 2 }], 'the retry went to the running instance');
  t.ok(Date.now() - start >= 290, 'after the delay the handler asked for');
  t.equal(bus.hasUnsettled(), false, 'settled');
});
