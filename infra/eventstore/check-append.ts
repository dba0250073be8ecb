// What every adapter refuses before an append reaches its database: the same answers for the same
// mistakes (programming errors, not conflicts), whichever store runs.
import type { StreamAppend, UnchangedStream } from './types.ts';

export const MAX_EVENTS_PER_APPEND = 1000;

export function checkAppend(appends: StreamAppend[], unchanged: UnchangedStream[]): void {
  if (appends.length === 0) throw new Error('append with no streams');
  for (const a of appends) {
    if (a.events.length === 0) throw new Error(`append to ${a.streamId} with no events`);
    if (a.events.length > MAX_EVENTS_PER_APPEND) throw new Error(`too many events for ${a.streamId}`);
  }
  const ids = new Set(appends.map((a) => a.streamId));
  if (ids.size !== appends.length) throw new Error('one append names the same stream twice');
  for (const u of unchanged) {
    if (!Number.isInteger(u.version) || u.version < 0) throw new Error(`unchanged ${u.streamId}: version must be a whole number ≥ 0`);
    if (ids.has(u.streamId)) throw new Error(`${u.streamId} is both written and required unchanged`);
    ids.add(u.streamId);
  }
  if (ids.size !== appends.length + unchanged.length) throw new Error('one stream required unchanged twice');
}
