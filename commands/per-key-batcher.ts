// Group commit for commands that must take turns on one stream (a merchant's wallet): while one
// batch for a key is being committed, the calls that arrive for the same key wait and then go
// together as the next batch, decided in order on the state the previous one left. Commands on one
// stream commit one after the other whatever happens, so under load N calls cost one round trip
// instead of N; alone, a call waits only for the current turn of the event loop to end.
//
// Two calls for the same item (`idOf`) never share a batch: the later one waits for the next, so
// it is decided on the state the earlier one committed, as it would be on its own.
import { invariant } from '../domain/errors.ts';

type Entry<In, Out> = { item: In; resolve: (o: Out) => void; reject: (e: unknown) => void };

export class PerKeyBatcher<In, Out> {
  /**
   * Bounded by its callers: each entry is a command awaiting its answer (a request or a worker's
   * message in flight, themselves bounded by the HTTP server and the consumers' concurrency), and a
   * key's queue is removed once it is empty.
   */
  private readonly queues = new Map<string, Array<Entry<In, Out>>>();

  /**
   * `run` answers each item of a batch, in order: its value, or the error it failed with (one
   * item's failure need not be the others').
   */
  constructor(
    private readonly run: (key: string, items: In[]) => Promise<Array<PromiseSettledResult<Out>>>,
    private readonly idOf: (item: In) => string,
    private readonly maxBatch = 64,
  ) {
    invariant(maxBatch >= 1, 'a batch holds at least one call');
  }

  submit(key: string, item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      const waiting = this.queues.get(key);
      if (waiting) {
        waiting.push({ item, resolve, reject });
        return;
      }
      this.queues.set(key, [{ item, resolve, reject }]);
      setImmediate(() => void this.drain(key));
    });
  }

  /** Batches for `key` one after the other until none is waiting. */
  private async drain(key: string): Promise<void> {
    const waiting = this.queues.get(key)!;
    while (waiting.length > 0) {
      const batch = this.take(waiting);
      let answers: Array<PromiseSettledResult<Out>>;
      try {
        answers = await this.run(key, batch.map((e) => e.item));
        invariant(answers.length === batch.length, `a batch of ${batch.length} answered ${answers.length} times`);
      } catch (err) {
        for (const e of batch) e.reject(err);
        continue;
      }
      batch.forEach((e, i) => {
        const a = answers[i]!;
        if (a.status === 'fulfilled') e.resolve(a.value);
        else e.reject(a.reason);
      });
    }
    this.queues.delete(key);
  }

  /** The next batch: waiting calls in order, up to the limit, one per item (the rest stay queued). */
  private take(waiting: Array<Entry<In, Out>>): Array<Entry<In, Out>> {
    const batch: Array<Entry<In, Out>> = [];
    const ids = new Set<string>();
    for (let i = 0; i < waiting.length && batch.length < this.maxBatch;) {
      const id = this.idOf(waiting[i]!.item);
      if (ids.has(id)) {
        i++;
        continue;
      }
      ids.add(id);
      batch.push(waiting.splice(i, 1)[0]!);
    }
    return batch;
  }
}
