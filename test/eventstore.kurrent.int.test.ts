// The KurrentDB event store: the shared event-store contract against a real server when
// EVENTSTORE_URL is set (KurrentDB 25.1 or later, for atomic multi-stream appends), and the
// adapter's translations (versions, positions, metadata, conflicts), which need no server.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { ANY, NO_STREAM, START, WrongExpectedVersionError, type RecordedEvent as KurrentRecordedEvent } from '@kurrent/kurrentdb-client';
import {
  KurrentEventStore, OUR_EVENT_TYPES, conflict, decodeEvent, encodeEvent, fromAll, positionFrom, streamState,
} from '../infra/eventstore/kurrent.ts';
import { WrongExpectedVersion } from '../infra/eventstore/types.ts';
import { systemClock } from '../infra/clock.ts';
import { eventStoreContract } from './helpers/eventstore-contract.ts';

t.test('expected versions: number of events in the stream → KurrentDB stream state', async (t) => {
  t.equal(streamState('any'), ANY);
  t.equal(streamState(0), NO_STREAM, '0 = the stream must not exist');
  t.equal(streamState(1), 0n, 'one event = revision 0');
  t.equal(streamState(40), 39n);
  t.throws(() => streamState(-1));
  t.throws(() => streamState(1.5));
});

t.test('checkpoints: reading $all after a position', async (t) => {
  t.equal(positionFrom(0n), START, 'from the start');
  t.same(positionFrom(4242n), { commit: 4242n, prepare: 4242n });
});

t.test('a version conflict reports the stream and its number of events', async (t) => {
  const appends = [
    { streamId: 'a', expectedVersion: 0, events: [{ type: 'x', data: {} }] },
    { streamId: 'b', expectedVersion: 3, events: [{ type: 'y', data: {} }] },
  ];
  const existing = conflict(new WrongExpectedVersionError(undefined, { streamName: 'b', expected: 2n, current: 4n }), appends);
  t.ok(existing instanceof WrongExpectedVersion);
  t.match(existing, { streamId: 'b', expected: 3, actual: 5 });
  const missing = conflict(new WrongExpectedVersionError(undefined, { streamName: 'a', expected: NO_STREAM, current: NO_STREAM }), appends);
  t.match(missing, { streamId: 'a', expected: 0, actual: 0 });
});

t.test('events round-trip: metadata and time as string properties, version from revision', async (t) => {
  const id = randomUUID();
  const at = '2026-06-01T10:00:00.000Z';
  const { data: eventData, id: written } = encodeEvent(
    { id, type: 'payin.created', data: { amount: '5000', nested: { x: [1, 'y'] } }, metadata: { requestId: 'req-1', attempt: 2 } },
    at,
  );
  t.equal(written, id);
  t.equal(eventData.contentType, 'application/json');
  const props = eventData.metadata as Record<string, unknown>;
  t.ok(Object.values(props).every((v) => typeof v === 'string'), 'only string values (what multiStreamAppend accepts)');
  // As the server gives it back: the properties as JSON metadata, with its own time and position.
  const stored = {
    streamId: 'payin-1', id, isJson: true, revision: 2n, type: 'payin.created', created: new Date('2026-06-01T10:00:01Z'),
    data: eventData.data, metadata: { ...props }, position: { commit: 9000n, prepare: 9000n },
  } as unknown as KurrentRecordedEvent;
  const e = decodeEvent(stored, undefined);
  t.same(e, {
    id, streamId: 'payin-1', version: 3, position: 9000n, type: 'payin.created',
    data: { amount: '5000', nested: { x: [1, 'y'] } }, metadata: { requestId: 'req-1', attempt: 2 },
    createdAt: new Date(at),
  });
  t.equal(fromAll({ event: stored as never, commitPosition: 9100n })?.position, 9100n, 'the commit position from $all');
  const foreign = decodeEvent({ ...stored, metadata: { source: 'elsewhere' } } as KurrentRecordedEvent, 1n);
  t.same(foreign.metadata, { source: 'elsewhere' }, 'metadata written by something else is kept as is');
  t.same(foreign.createdAt, new Date('2026-06-01T10:00:01Z'), 'with the server time');
});

t.test('system events and links are not delivered', async (t) => {
  const base = {
    streamId: 'x', id: randomUUID(), isJson: true, revision: 0n, type: 't', created: new Date(), data: {}, metadata: {},
    position: { commit: 1n, prepare: 1n },
  };
  t.equal(fromAll({ event: { ...base, type: '$metadata' } as never }), undefined, '$ event type');
  t.equal(fromAll({ event: { ...base, streamId: '$settings' } as never }), undefined, '$ stream');
  t.equal(fromAll({ event: base as never, link: base as never }), undefined, 'a resolved link');
  t.equal(fromAll({ event: { ...base, streamId: 'snapshot-x', type: 'payments.snapshot' } as never }), undefined, 'a snapshot');
  t.ok(fromAll({ event: base as never }), 'an ordinary event');
  // The server-side filter of $all (the same lookahead in .NET's regex as in JavaScript's).
  const read = new RegExp(OUR_EVENT_TYPES);
  t.same(['payin.created', '$metadata', 'payments.snapshot', 'payments.snapshots', 'paymentsXsnapshot'].filter((type) => read.test(type)),
    ['payin.created', 'payments.snapshots', 'paymentsXsnapshot'], 'the filter leaves out system events and snapshots only');
});

const url = process.env.EVENTSTORE_URL;
if (!url) {
  t.skip('EVENTSTORE_URL not set: the event-store contract on KurrentDB needs a server, e.g. EVENTSTORE_URL=kurrentdb://127.0.0.1:2113?tls=false (docker compose up kurrentdb)', () => {});
} else {
  t.test('event-store contract on KurrentDB', async (t) => {
    eventStoreContract(t, async () => {
      const store = new KurrentEventStore(url, systemClock);
      return { store, teardown: () => store.close() };
    });
  });
}
