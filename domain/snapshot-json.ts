// A snapshot codec for states that are plain data (records, arrays, strings, numbers, booleans,
// null) with bigint amounts: the state as JSON, each bigint as `{"$bigint": "<digits>"}` so that
// it comes back a bigint (a bare string could not be told from a string field). A deep copy both
// ways: the snapshot shares nothing with the state it was taken from.
import type { SnapshotCodec } from './decider.ts';

const BIGINT = '$bigint';

function encodeValue(v: unknown): unknown {
  if (typeof v === 'bigint') return { [BIGINT]: v.toString() };
  if (Array.isArray(v)) return v.map(encodeValue);
  if (v !== null && typeof v === 'object') {
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null) throw new Error(`snapshot: not plain data (${(v as object).constructor?.name ?? 'object'})`);
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = encodeValue(x);
    return out;
  }
  if (typeof v === 'function' || typeof v === 'symbol' || (typeof v === 'number' && !Number.isFinite(v))) throw new Error(`snapshot: ${typeof v} is not JSON`);
  return v;
}

function decodeValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(decodeValue);
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v);
    if (entries.length === 1 && entries[0]![0] === BIGINT && typeof entries[0]![1] === 'string') return BigInt(entries[0]![1]);
    const out: Record<string, unknown> = {};
    for (const [k, x] of entries) out[k] = decodeValue(x);
    return out;
  }
  return v;
}

/** A codec for a plain-data state; `shape` names the state's shape (bump it when the state changes). */
export function jsonSnapshot<S>(shape: string, every: number): SnapshotCodec<S> {
  if (!Number.isInteger(every) || every < 1) throw new Error(`snapshot every ${every}: a positive integer`);
  return {
    shape,
    every,
    encode: (state) => encodeValue(state),
    decode: (json) => decodeValue(json) as S,
  };
}
