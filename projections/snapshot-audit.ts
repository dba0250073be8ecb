// The audit of snapshots (issue 32): a snapshot is derived data that loads trust instead of the
// events before it, so each must be the fold of its stream up to its version. For every stream of a
// decider that takes snapshots (Decider.snapshot), met while the audit replays the events: its latest
// snapshot, decoded with the decider's codec, is compared with a fresh fold of events 1..version
// (read in pages). A mismatch, a snapshot that does not decode or a version past the stream's end is
// a finding; a snapshot of another shape than the decider's (written before a shape change, never
// loaded) is skipped and counted.
import type { Decider, DomainEvent, SnapshotCodec } from '../domain/decider.ts';
import type { EventStore } from '../infra/eventstore/types.ts';
import { walletDecider } from '../domain/wallet.ts';
import { merchantDecider } from '../domain/merchant.ts';
import { payinDecider } from '../domain/payin.ts';
import { payoutDecider } from '../domain/payout.ts';
import { transferDecider } from '../domain/transfer.ts';
import { quoteDecider } from '../domain/quote.ts';
import { customerDecider } from '../domain/customer.ts';

export type AnyDecider = Decider<unknown, DomainEvent>;

/** Each stream kind's decider, by the stream id's prefix (commands/streams.ts names the streams). */
const DECIDERS_BY_PREFIX: Array<[prefix: string, decider: AnyDecider]> = ([
  ['wallet-', walletDecider],
  ['merchant-', merchantDecider],
  ['payin-', payinDecider],
  ['payout-', payoutDecider],
  ['transfer-', transferDecider],
  ['quote-', quoteDecider],
  ['customer-', customerDecider],
] as Array<[string, unknown]>) as Array<[string, AnyDecider]>;

export interface SnapshotFinding {
  stream: string;
  version: number;
  message: string;
}

export interface SnapshotAudit {
  ok: boolean;
  /** Snapshots compared with the fold of their stream. */
  checked: number;
  /** Snapshots of a shape their decider no longer has: never loaded, not compared. */
  other_shape: number;
  /** Snapshots that are not the fold of their stream (the first FINDINGS_KEPT in `findings`). */
  mismatched: number;
  findings: SnapshotFinding[];
}

/** The findings kept in the report (all are counted). */
const FINDINGS_KEPT = 100;

/** JSON with its keys sorted, so two encodings compare whatever order a store kept the keys in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

export class SnapshotAuditor {
  /** The streams to check, with their decider: those of deciders that take snapshots. */
  private readonly streams = new Map<string, AnyDecider>();

  constructor(private readonly deciders: Array<[string, AnyDecider]> = DECIDERS_BY_PREFIX) {}

  /** Notes an event's stream (called for every event the audit replays). */
  see(streamId: string): void {
    if (this.streams.has(streamId)) return;
    const d = this.deciders.find(([prefix]) => streamId.startsWith(prefix))?.[1];
    if (d?.snapshot) this.streams.set(streamId, d);
  }

  async check(store: EventStore, pageSize: number): Promise<SnapshotAudit> {
    const report: SnapshotAudit = { ok: true, checked: 0, other_shape: 0, mismatched: 0, findings: [] };
    for (const [streamId, decider] of this.streams) {
      const snapshot = await store.readSnapshot(streamId);
      if (!snapshot) continue;
      const codec = decider.snapshot!;
      if (snapshot.shape !== codec.shape) {
        report.other_shape++;
        continue;
      }
      report.checked++;
      const message = await this.compare(store, streamId, decider, codec, snapshot.version, snapshot.state, pageSize);
      if (message === undefined) continue;
      report.mismatched++;
      if (report.findings.length < FINDINGS_KEPT) report.findings.push({ stream: streamId, version: snapshot.version, message });
    }
    report.ok = report.mismatched === 0;
    return report;
  }

  /** Why the snapshot is not the fold of its stream up to its version, or undefined if it is. */
  private async compare(
    store: EventStore, streamId: string, decider: AnyDecider, codec: SnapshotCodec<unknown>,
    version: number, json: unknown, pageSize: number,
  ): Promise<string | undefined> {
    let decoded: unknown;
    try {
      decoded = codec.decode(json);
    } catch (err) {
      return `the snapshot does not decode: ${(err as Error).message}`;
    }
    let state = decider.initialState();
    let folded = 0;
    try {
      for (let from = 1; from <= version; from += pageSize) {
        const events = await store.readStream(streamId, from, Math.min(version, from + pageSize - 1));
        for (const e of events) state = decider.evolve(state, { type: e.type, data: e.data });
        folded += events.length;
        if (events.length < Math.min(pageSize, version - from + 1)) break;
      }
    } catch (err) {
      return `the stream does not fold up to version ${version}: ${(err as Error).message}`;
    }
    if (folded !== version) return `the snapshot is at version ${version}, the stream has ${folded} events`;
    return canonical(codec.encode(decoded)) === canonical(codec.encode(state))
      ? undefined
      : `the snapshot differs from the fold of events 1..${version}`;
  }
}
