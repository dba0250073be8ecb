// The provider gateway's turns (workers/gateway-turns.ts): at most `size` starts do their work at
// once, first come first served; a start waiting for a provider's answer holds no turn, and takes
// one again (queueing behind the others) before it records the answer.
import t from 'tap';
import { GatewayTurns } from '../workers/gateway-turns.ts';

const tick = () => new Promise((r) => setImmediate(r));

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

t.test('at most `size` at work at once, the others served in their order of arrival', async (t) => {
  const turns = new GatewayTurns(2);
  let working = 0;
  let peak = 0;
  const order: number[] = [];
  const gates = Array.from({ length: 5 }, gate);
  const all = gates.map((g, i) => turns.within(async () => {
    working++;
    peak = Math.max(peak, working);
    order.push(i);
    await g.wait;
    working--;
  }));
  await tick();
  t.same(order, [0, 1], 'two at work, three waiting');
  gates[1]!.open();
  await tick();
  t.same(order, [0, 1, 2], 'a turn given back passes to the first waiting');
  for (const g of gates) g.open();
  await Promise.all(all);
  t.equal(peak, 2);
  t.same(order, [0, 1, 2, 3, 4]);
});

t.test('waiting outside gives the turn up; the answer queues for a turn like any start', async (t) => {
  const turns = new GatewayTurns(1);
  const provider = gate();
  const events: string[] = [];
  const first = turns.within(async () => {
    events.push('first works');
    await turns.outside(async () => {
      events.push('first waits at the provider');
      await provider.wait;
    });
    events.push('first records the answer');
  });
  await tick();
  const second = gate();
  const other = turns.within(async () => {
    events.push('second works');
    await second.wait;
    events.push('second done');
  });
  await tick();
  t.same(events, ['first works', 'first waits at the provider', 'second works'], 'the turn went to the second start while the first waited');
  provider.open();
  await tick();
  t.same(events.at(-1), 'second works', 'the answer waits for a turn');
  second.open();
  await Promise.all([first, other]);
  t.same(events.slice(3), ['second done', 'first records the answer']);
});

t.test('a provider call that throws takes a turn back before the error goes on, and gives it back after', async (t) => {
  const turns = new GatewayTurns(1);
  let otherRan = false;
  let other: Promise<void> | undefined;
  await t.rejects(turns.within(async () => {
    try {
      await turns.outside(async () => { throw new Error('time-out'); });
    } finally {
      other = turns.within(async () => { otherRan = true; });
      await tick();
      t.notOk(otherRan, 'the failed start holds its turn again: nobody else works meanwhile');
    }
  }), /time-out/);
  await other;
  t.ok(otherRan, 'the turn was given back in the end');
});
