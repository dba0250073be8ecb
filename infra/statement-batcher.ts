// Group commit for single-row statements: calls made within one turn of the event loop are sent as
// one multi-row statement, each caller getting its own row's answer. Under load that turns N round
// trips (each a socket write and a wake-up of the server, the dominant cost per statement on this
// service's hot path: bench/PROFILE.md) into one; alone, a call waits only for the current turn to end.
// If the statement fails, every call in it fails with that error, as each would have on its own.
export class StatementBatcher<In, Out> {
  /** Bounded by its callers: each entry is a call awaiting its row, taken whole at the next turn. */
  private queue: Array<{ item: In; resolve: (o: Out) => void; reject: (e: unknown) => void }> = [];
  private scheduled = false;

  /**
   * `run` answers one output per input, in the same order. `windowMs` > 0 gathers calls for that
   * long instead of one turn: for statements nobody waits on (a finished job's removal), where
   * calls come a few milliseconds apart and would each be a statement of their own.
   */
  constructor(
    private readonly run: (items: In[]) => Promise<Out[]>,
    private readonly maxBatch = 256,
    private readonly windowMs = 0,
  ) {}

  submit(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        if (this.windowMs > 0) setTimeout(() => this.flush(), this.windowMs);
        else setImmediate(() => this.flush());
      }
    });
  }

  /** Sends what is gathered now instead of at the window's end (a scheduler stopping: nothing more will come). */
  flushNow(): void {
    if (this.queue.length > 0) this.flush();
  }

  private flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.run(batch.map((b) => b.item)).then(
        (outs) => batch.forEach((b, i) => b.resolve(outs[i]!)),
        (err: unknown) => batch.forEach((b) => b.reject(err)),
      );
    }
  }
}
