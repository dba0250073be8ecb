// The batches the event forwarder published to the in-process bus and has not yet saved past: each
// with the bus's last sequence number once it was published. A batch is safe (a crash would lose
// nothing of it) once no consumer owes an outcome for any message up to that number.

/** Enough for minutes of batches behind one message a consumer keeps retrying. */
export const MAX_FORWARDED_BATCHES = 10_000;

export class ForwardedBatches {
  private batches: Array<{ position: bigint; seq: number }> = [];

  constructor(private readonly max = MAX_FORWARDED_BATCHES) {}

  /** A batch forwarded up to `position`, the bus's last sequence number then being `seq`. */
  add(position: bigint, seq: number): void {
    const tail = this.batches[this.batches.length - 1];
    // Nothing published since the batch before (its events were all filtered out): one entry.
    if (tail && tail.seq === seq) tail.position = position;
    else this.batches.push({ position, seq });
    // Bounded by merging the oldest two, which only asks more to be settled before the first is passed.
    if (this.batches.length > this.max) this.batches.splice(0, 2, this.batches[1]!);
  }

  /**
   * Removes and returns the last position safe to save, given the lowest sequence number still
   * unsettled (undefined: none), or undefined when no batch became safe.
   */
  takeSafe(lowestUnsettled: number | undefined): bigint | undefined {
    let safe: bigint | undefined;
    while (this.batches.length > 0 && (lowestUnsettled === undefined || this.batches[0]!.seq < lowestUnsettled)) {
      safe = this.batches.shift()!.position;
    }
    return safe;
  }

  clear(): void {
    this.batches = [];
  }

  get size(): number {
    return this.batches.length;
  }
}
