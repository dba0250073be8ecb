// The bus contract: every Bus implementation must pass it. Called by one test file per bus
// (test/bus.memory.int.test.ts, test/bus.nats.e2e.test.ts).
import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { Bus, BusMessage } from '../../infra/bus/types.ts';
import { waitUntil } from './wait.ts';

export interface BusFixture {
  bus: Bus;
  /**
   * Another handle on the same bus, as a second process running the same workers would have. NATS:
   * a second connection with the same prefix. The in-process bus: the same bus object, because
   * there a durable lives in one process (a second process has a bus of its own).
   */
  peer(): Promise<Bus>;
  teardown(): Promise<void>;
}

export interface BusContractOptions {
  make(): Promise<BusFixture>;
  /** The bus's ack wait: how long an unanswered message waits before it is redelivered. */
  ackWaitMs: number;
  /**
   * JetStream keeps what is published while a durable consumer is stopped and delivers it when the
   * consumer starts again. The in-process bus keeps nothing for a durable that is not running.
   */
  keepsMessagesWhileStopped: boolean;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits until `cond` holds (test/helpers/wait.ts: the bound is a safety net only). */
export const waitFor = (what: string, cond: () => boolean | Promise<boolean>, timeoutMs?: number): Promise<unknown> => waitUntil(what, cond, timeoutMs);

const newId = () => randomUUID();

export function busContract(t: Test, opts: BusContractOptions): void {
  const fixture = async (t: Test) => {
    const f = await opts.make();
    t.teardown(() => f.teardown());
    return f;
  };

  t.test('a durable consumer gets the messages its subjects match, wildcards included', async (t) => {
    const { bus } = await fixture(t);
    t.equal(await bus.healthy(), true, 'healthy while connected');
    const got: BusMessage[] = [];
    await bus.consume({ durable: 'wild', subjects: ['orders.*', 'refunds.>'], handler: async (m) => { got.push(m); } });
    const ids = Array.from({ length: 6 }, newId);
    await bus.publish('orders.created', ids[0]!, { n: 0 });
    await bus.publish('orders.created.extra', ids[1]!, { n: 1 }); // `*` is exactly one token
    await bus.publish('refunds', ids[2]!, { n: 2 }); // `>` needs at least one more token
    await bus.publish('payouts.created', ids[3]!, { n: 3 });
    await bus.publish('refunds.partial.full', ids[4]!, { n: 4 });
    await bus.publish('orders.paid', ids[5]!, { n: 5, nested: { amount: '5000' } });
    await waitFor('the last message', () => got.some((m) => m.id === ids[5]));
    t.same(got.map((m) => [m.subject, m.id, m.data, m.deliveryCount]), [
      ['orders.created', ids[0], { n: 0 }, 1],
      ['refunds.partial.full', ids[4], { n: 4 }, 1],
      ['orders.paid', ids[5], { n: 5, nested: { amount: '5000' } }, 1],
    ], 'matching messages in order, subject as published, data intact');
  });

  t.test('at least once: an acknowledged message is not delivered again', async (t) => {
    const { bus } = await fixture(t);
    const got: BusMessage[] = [];
    await bus.consume({ durable: 'acked', subjects: ['acked.>'], handler: async (m) => { got.push(m); } });
    const ids = Array.from({ length: 5 }, newId);
    for (const id of ids) await bus.publish('acked.one', id, { id });
    await waitFor('5 deliveries', () => got.length >= 5);
    await sleep(opts.ackWaitMs + 500); // past the ack wait: anything unacknowledged would be back
    t.same(got.map((m) => m.id), ids, 'each delivered once, in order');
    t.ok(got.every((m) => m.deliveryCount === 1), 'no redelivery');
  });

  t.test('a handler that throws gets the message again, with a growing delivery count', async (t) => {
    const { bus } = await fixture(t);
    const counts: number[] = [];
    await bus.consume({
      durable: 'throws', subjects: ['throws.x'], backoffMs: () => 100,
      handler: async (m) => {
        counts.push(m.deliveryCount);
        if (m.deliveryCount < 3) throw new Error(`attempt ${m.deliveryCount} fails`);
      },
    });
    await bus.publish('throws.x', newId(), {});
    await waitFor('3 deliveries', () => counts.length >= 3);
    await sleep(500);
    t.same(counts, [1, 2, 3], 'redelivered until it succeeds, then acknowledged');
  });

  t.test('{retryAfterMs} redelivers the message after that delay, not before', async (t) => {
    const { bus } = await fixture(t);
    const seen: Array<{ at: number; count: number }> = [];
    await bus.consume({
      durable: 'later', subjects: ['later.x'],
      handler: async (m) => {
        seen.push({ at: performance.now(), count: m.deliveryCount });
        if (m.deliveryCount === 1) return { retryAfterMs: 800 };
        return undefined;
      },
    });
    await bus.publish('later.x', newId(), {});
    await waitFor('the redelivery', () => seen.length >= 2);
    const waited = seen[1]!.at - seen[0]!.at;
    // 1 ms of slack for timer rounding: the in-process bus's setTimeout counts whole milliseconds.
    t.ok(waited >= 799, `redelivered after ${Math.round(waited)} ms (asked 800)`);
    t.equal(seen[1]!.count, 2);
    await sleep(300);
    t.equal(seen.length, 2, 'acknowledged on the second delivery');
  });

  t.test('a re-published id is delivered once', async (t) => {
    const { bus } = await fixture(t);
    const got: BusMessage[] = [];
    await bus.consume({ durable: 'dedupe', subjects: ['dedupe.>'], handler: async (m) => { got.push(m); } });
    const id = newId();
    const last = newId();
    await bus.publish('dedupe.a', id, { v: 1 });
    await bus.publish('dedupe.a', id, { v: 2 });
    await bus.publish('dedupe.a', last, { v: 3 });
    await waitFor('the last message', () => got.some((m) => m.id === last));
    t.same(got.map((m) => [m.id, m.data]), [[id, { v: 1 }], [last, { v: 3 }]], 'the second publish of the id was dropped');
  });

  t.test('after maxDeliver failed deliveries the message goes to the dead-letter subject with the error', async (t) => {
    const { bus } = await fixture(t);
    const counts: number[] = [];
    await bus.consume({
      durable: 'doomed', subjects: ['jobs.*'], maxDeliver: 3, backoffMs: () => 50,
      handler: async (m) => {
        counts.push(m.deliveryCount);
        throw new Error(`boom ${m.deliveryCount}`);
      },
    });
    const dead: BusMessage[] = [];
    await bus.consume({ durable: 'doomed-watch', subjects: [bus.deadLetterSubject('doomed')], handler: async (m) => { dead.push(m); } });
    const id = newId();
    await bus.publish('jobs.run', id, { job: 1 });
    await waitFor('the dead letter', () => dead.length >= 1);
    t.same(counts, [1, 2, 3], 'delivered maxDeliver times');
    t.match(dead[0], {
      id, subject: bus.deadLetterSubject('doomed'), data: { job: 1 },
      deadLetter: { durable: 'doomed', subject: 'jobs.run', deliveryCount: 3 },
    });
    t.match(dead[0]!.deadLetter!.error, /boom 3/, 'with the last error');
    await sleep(500);
    t.same(counts, [1, 2, 3], 'the original is not delivered again');
    t.equal(dead.length, 1, 'dead-lettered once');
  });

  t.test('consumers with different durable names each get every message', async (t) => {
    const { bus } = await fixture(t);
    const a: string[] = [];
    const b: string[] = [];
    await bus.consume({ durable: 'fan-a', subjects: ['fan.>'], handler: async (m) => { a.push(m.id); } });
    await bus.consume({ durable: 'fan-b', subjects: ['fan.*'], handler: async (m) => { b.push(m.id); } });
    const ids = Array.from({ length: 10 }, newId);
    for (const id of ids) await bus.publish('fan.out', id, {});
    await waitFor('both consumers', () => a.length >= 10 && b.length >= 10);
    await sleep(200);
    t.same(a, ids);
    t.same(b, ids);
  });

  t.test('instances of one durable consumer share its messages: each handled by one of them', async (t) => {
    // NATS: two connections (two processes) pulling from one durable. In-process bus: two consume()
    // calls on one bus, since there a durable lives in one process.
    const { bus, peer } = await fixture(t);
    const other = await peer();
    const a: string[] = [];
    const b: string[] = [];
    const slow = (into: string[]) => async (m: BusMessage) => {
      await sleep(15);
      into.push(m.id);
    };
    await bus.consume({ durable: 'shared', subjects: ['work.>'], handler: slow(a) });
    await other.consume({ durable: 'shared', subjects: ['work.>'], handler: slow(b) });
    const ids = Array.from({ length: 40 }, newId);
    for (const id of ids) await bus.publish('work.item', id, {});
    await waitFor('every message', () => a.length + b.length >= ids.length);
    await sleep(300);
    t.equal(a.length + b.length, ids.length, 'handled once in all');
    t.same(new Set([...a, ...b]), new Set(ids), 'every message handled');
    t.same(a.filter((id) => b.includes(id)), [], 'no message handled by both');
    t.ok(a.length > 0 && b.length > 0, `both took part (${a.length} and ${b.length})`);
  });

  t.test('a durable consumer stopped and started again resumes where it was', async (t) => {
    const { bus } = await fixture(t);
    const before: string[] = [];
    const after: string[] = [];
    let into = before;
    const handler = async (m: BusMessage) => { into.push(m.id); };
    const first = await bus.consume({ durable: 'resume', subjects: ['resume.>'], handler });
    const ids = Array.from({ length: 7 }, newId);
    for (const id of ids.slice(0, 3)) await bus.publish('resume.x', id, {});
    await waitFor('the first three', () => before.length >= 3);
    await first.stop();
    into = after;
    for (const id of ids.slice(3, 6)) await bus.publish('resume.x', id, {}); // while stopped
    await bus.consume({ durable: 'resume', subjects: ['resume.>'], handler });
    await bus.publish('resume.x', ids[6]!, {});
    await waitFor('the message published after the restart', () => after.includes(ids[6]!));
    await sleep(200);
    t.same(before, ids.slice(0, 3));
    if (opts.keepsMessagesWhileStopped) {
      t.same(after, ids.slice(3), 'what was published while stopped, then the rest; nothing twice');
    } else {
      // The in-process bus keeps nothing for a durable that is not running. In the embedded mode
      // consumers stop only with the process, and the event forwarder re-sends from its checkpoint
      // (saved only once every consumer settled what it forwarded) when the process starts again.
      t.same(after, [ids[6]], 'only what was published after the restart; nothing twice');
    }
  });

  t.test('concurrency: up to that many messages are handled at once', async (t) => {
    const { bus } = await fixture(t);
    let active = 0;
    let peak = 0;
    let done = 0;
    await bus.consume({
      durable: 'parallel', subjects: ['parallel.>'], concurrency: 4,
      handler: async () => {
        active++;
        peak = Math.max(peak, active);
        await sleep(150);
        active--;
        done++;
      },
    });
    for (let i = 0; i < 12; i++) await bus.publish('parallel.job', newId(), { i });
    await waitFor('12 handled', () => done >= 12);
    t.equal(peak, 4, 'four at once, never more');
  });
}
