// The events this process committed most recently, kept so that its own subscribers (the
// projector, the event forwarder) take them from memory instead of reading back the rows the
// append's INSERT … RETURNING just gave us: two reads per append saved, which under load was the
// largest share of the service's statements.
//
// When is memory as good as the table? Appends commit one after the other in position order (the
// append lock), so a committed position p with p + 1 also committed has nothing between them. A
// reader at position `after` may therefore take from memory only the run that starts at exactly
// `after + 1` and goes on in steps of one. Anything else (a gap from another process's commit or a
// rolled-back sequence value, a reader behind the buffer) falls back to the table.
import type { RecordedEvent } from './types.ts';

/**
 * Events kept (this many, and up to a sixteenth more between trims). Besides the subscribers, a
 * payin's completion webhook takes the payin's stream from here (its snapshot); it comes when the
 * provider settles, 2 s after the payin on the sandbox, more under load. A pair (quote and payin)
 * appends about seven events: at 1,000 pairs a second that is 14,000 in between. When the buffer
 * held this many to twice as many, 4,096 read ~0.8 streams back per pair from the table
 * (bench/statements.ts, 6,000 pairs) and 16,384 about 0.24, for 10 to 17 MB more peak RSS; held at
 * 16,384 to 17,408, the round-trips scenario counted no more statements per pair or per payin
 * settled than before (bench/PROFILE.md §29).
 */
export const RECENT_APPENDS_LIMIT = 16_384;

export class RecentAppends {
  private events: RecordedEvent[] = [];
  /** The same events by stream, in version order. */
  private byStream = new Map<string, RecordedEvent[]>();
  /**
   * Events over the limit before the oldest are dropped: a sixteenth of it, so the trim's copy of the
   * array is paid once per that many events, and the buffer never holds much more than `limit`.
   * (Trimming back only at twice the limit held up to 32,768 events: their peak was the embedded
   * service's largest cache, bench/PROFILE.md §29.)
   */
  private readonly trimStep: number;

  constructor(readonly limit = RECENT_APPENDS_LIMIT) {
    this.trimStep = Math.max(1, Math.ceil(limit / 16));
  }

  /** Adds one committed batch (in position order). A batch that does not follow on starts afresh. */
  add(batch: RecordedEvent[]): void {
    if (batch.length === 0) return;
    const last = this.events[this.events.length - 1];
    if (last && batch[0]!.position <= last.position) this.clear(); // never expected: stay correct
    this.events.push(...batch);
    this.index(batch);
    if (this.events.length >= this.limit + this.trimStep) this.trim();
  }

  private index(events: RecordedEvent[]): void {
    for (const e of events) {
      const list = this.byStream.get(e.streamId);
      if (list) list.push(e);
      else this.byStream.set(e.streamId, [e]);
    }
  }

  /** Back to the newest `limit` events. Each dropped event is the oldest of its stream's list (both go in position order). */
  private trim(): void {
    const dropped = this.events.splice(0, this.events.length - this.limit);
    for (const e of dropped) {
      const list = this.byStream.get(e.streamId);
      if (list?.[0] !== e) { // never expected: stay correct
        this.byStream.clear();
        this.index(this.events);
        return;
      }
      if (list.length === 1) this.byStream.delete(e.streamId);
      else list.shift();
    }
  }

  /**
   * A stream's events `from` to `to` (versions, inclusive) if this process committed every one of
   * them recently, else undefined (read the table). A stream's versions only grow with positions,
   * so the run held here from `from` reaching `to` in `to - from` steps has no gap.
   */
  range(streamId: string, from: number, to: number): RecordedEvent[] | undefined {
    const list = this.byStream.get(streamId);
    if (!list || to < from) return undefined;
    const i = list.findIndex((e) => e.version === from);
    const j = i + (to - from);
    if (i < 0 || j >= list.length || list[j]!.version !== to) return undefined;
    return list.slice(i, j + 1);
  }

  /** The contiguous run of events right after `after` (at most `limit`), or [] to read the table. */
  after(after: bigint, limit: number): RecordedEvent[] {
    const events = this.events;
    if (events.length === 0) return [];
    const first = after + 1n;
    // Positions are mostly consecutive: look where `first` would be, then search near it.
    let i = Number(first - events[0]!.position);
    if (i < 0 || i >= events.length || events[i]!.position !== first) i = indexOfPosition(events, first);
    if (i < 0) return [];
    const run = [events[i]!];
    for (let j = i + 1; j < events.length && run.length < limit && events[j]!.position === events[j - 1]!.position + 1n; j++) run.push(events[j]!);
    return run;
  }

  /** Events held now. */
  get size(): number {
    return this.events.length;
  }

  /** Events in the by-stream index (always `size`: the tests check the trim leaves no stale entry). */
  get indexedEvents(): number {
    let n = 0;
    for (const list of this.byStream.values()) n += list.length;
    return n;
  }

  clear(): void {
    this.events = [];
    this.byStream.clear();
  }
}

/**
 * Where `position` is in events sorted by position, or -1. A caught-up reader asks for the position
 * after the newest one on every poll: a scan of the whole buffer each time was 1% of the service's
 * CPU under load (bench issue 8).
 */
function indexOfPosition(events: RecordedEvent[], position: bigint): number {
  let lo = 0;
  let hi = events.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const p = events[mid]!.position;
    if (p === position) return mid;
    if (p < position) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
