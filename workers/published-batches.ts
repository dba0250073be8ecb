// The batches the event forwarder published to a bus that may lose what it acknowledged (NATS) and
// has not yet saved past: the last position of each, when its last publish was acknowledged, and
// the bus generation read before its first publish (event-forwarder.ts says why each matters).

export class PublishedBatches {
  private batches: Array<{ position: bigint; at: number; generation: number }> = [];

  /** A batch published up to `position`, its last publish acknowledged `at`, started under `generation`. */
  add(position: bigint, at: number, generation: number): void {
    this.batches.push({ position, at, generation });
  }

  /**
   * Removes and returns the last position safe to save at `now`: the oldest batches published under
   * the bus's `generation` at least `marginMs` ago. Undefined when no batch became safe.
   */
  takeSafe(now: number, generation: number, marginMs: number): bigint | undefined {
    let safe: bigint | undefined;
    while (this.batches.length > 0 && this.batches[0]!.generation === generation && now - this.batches[0]!.at >= marginMs) {
      safe = this.batches.shift()!.position;
    }
    return safe;
  }

  clear(): void {
    this.batches = [];
  }
}
