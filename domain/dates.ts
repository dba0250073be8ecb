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

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * Instants PostgreSQL reads as JavaScript writes them, with a day of room either side (a day's
 * bound, a default period of a day): ISO years 0001 to 9999. Year 0000 and years written with six
 * digits it refuses ("date/time field value out of range": a filter of 0000-01-01 was a 500).
 */
const FIRST_STORABLE_MS = Date.parse('0001-01-01T00:00:00Z') + DAY_MS;
const LAST_STORABLE_MS = Date.parse('9999-12-31T00:00:00Z') - DAY_MS;

/** Whether an instant (ms since the epoch) is one the database can store and compare, a day either side included. */
export function isStorableInstant(ms: number): boolean {
  return Number.isFinite(ms) && ms >= FIRST_STORABLE_MS && ms <= LAST_STORABLE_MS;
}

/** The start (UTC, ms) of a calendar date YYYY-MM-DD that exists and is storable; undefined otherwise (2024-02-30, 0000-01-01). */
export function calendarDayStart(value: string): number | undefined {
  if (!isCalendarDate(value)) return undefined;
  const start = Date.parse(`${value}T00:00:00Z`);
  return isStorableInstant(start) ? start : undefined;
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
