// GET /events lists newest first by the row's created_at; events appended together share one
// timestamp, so the stream version breaks the tie (api.transfers.e2e.test.ts checks the list itself).
import t from 'tap';
import { sortInstant } from '../workers/webhooks/store.ts';

t.test('same instant: a later stream version sorts later, by microseconds only', async (t) => {
  const at = '2026-11-23T10:00:00.123Z';
  const v7 = sortInstant(at, 7);
  const v8 = sortInstant(at, 8);
  t.equal(v7, '2026-11-23T10:00:00.123007Z');
  t.ok(Date.parse(v8) === Date.parse(at) && v8 > v7, 'same millisecond, ordered by version');
  t.ok(sortInstant('2026-11-23T10:00:00.124Z', 1) > sortInstant(at, 999), 'a later millisecond still sorts later');
});
