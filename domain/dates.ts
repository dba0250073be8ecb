// Calendar dates (YYYY-MM-DD) as people write them on documents and forms. "Today" depends on where
// one stands: a date is "not in the future" if it has begun somewhere on Earth (UTC+14), and "not in
// the past" if it has not yet ended everywhere (UTC-12). Pure: the instant arrives from the caller.

/** A calendar date written YYYY-MM-DD that exists (no 2023-02-30). */
export function isCalendarDate(value: string): boolean {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === value;
}

const HOUR_MS = 60 * 60 * 1000;
/** The earliest civil time zone (UTC-12) and the latest (UTC+14). */
const EARLIEST_OFFSET_MS = -12 * HOUR_MS;
const LATEST_OFFSET_MS = 14 * HOUR_MS;

/** The newest calendar date that has begun somewhere at `at` (ISO date-time). */
export function latestDateAt(at: string): string {
  return new Date(Date.parse(at) + LATEST_OFFSET_MS).toISOString().slice(0, 10);
}

/** The oldest calendar date that has not yet ended everywhere at `at` (ISO date-time). */
export function earliestDateAt(at: string): string {
  return new Date(Date.parse(at) + EARLIEST_OFFSET_MS).toISOString().slice(0, 10);
}
