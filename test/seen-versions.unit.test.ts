// SeenVersions: the newest version of each watched stream read in the global order, and up to which
// position that is complete (the baseline at start, then the readers' intervals without a gap).
import t from 'tap';
import { SeenVersions } from '../infra/eventstore/seen-versions.ts';
import type { RecordedEvent } from '../infra/eventstore/types.ts';

const ev = (streamId: string, version: number, position: bigint): RecordedEvent => ({
  id: `${streamId}-${version}`, streamId, version, position, type: 't', data: {}, metadata: {}, createdAt: new Date(0),
});
const watched = () => new SeenVersions((id) => id.startsWith('m-'));

t.test('watched streams only; versions and position never go back', async (t) => {
  const v = watched();
  const r = v.reader(5n);
  v.setBaseline(9n);
  t.equal(v.position, 9n, 'the baseline: the head before anything was cached');
  t.equal(v.latest('m-1'), 0);
  r.observe([ev('m-1', 1, 10n), ev('x-1', 1, 11n), ev('m-1', 2, 12n)]);
  t.equal(v.latest('m-1'), 2);
  t.equal(v.latest('x-1'), 0, 'an unwatched stream is not kept');
  t.equal(v.position, 12n);
  // A rewound reader going over older events: nothing moves back.
  v.reader(9n).observe([ev('m-1', 1, 10n)]);
  t.equal(v.latest('m-1'), 2);
  t.equal(v.position, 12n);
  r.observe([]);
  t.equal(v.position, 12n, 'an empty batch changes nothing');
});

t.test('nothing counts before the baseline is set', async (t) => {
  const v = watched();
  v.reader(0n).observe([ev('m-1', 1, 1n)]);
  t.equal(v.position, 0n, 'no claim without a baseline');
  v.setBaseline(0n);
  t.equal(v.position, 1n);
  t.throws(() => v.setBaseline(5n), 'set once');
});

t.test('a reader that started past the covered part counts once the others reach its start', async (t) => {
  const v = watched();
  const projector = v.reader(10n);
  v.setBaseline(10n);
  // The forwarder restarted on a checkpoint that another process moved to 20: events 11 to 20 went
  // by unobserved here, and a merchant event among them may be newer than a state cached meanwhile.
  const forwarder = v.reader(20n);
  forwarder.observe([ev('m-1', 3, 21n), ev('x-1', 1, 30n)]);
  t.equal(v.position, 10n, 'the gap 11 to 20 is not covered: the forwarder does not count yet');
  projector.observe([ev('m-1', 2, 15n)]);
  t.equal(v.position, 15n);
  projector.observe([ev('x-2', 1, 20n)]);
  t.equal(v.position, 30n, 'the projector reached the forwarder\'s start: both count');
  t.equal(v.latest('m-1'), 3);
});

t.test('a bounded number of streams: one no longer kept is unknown (Infinity: read it), never 0', async (t) => {
  const v = new SeenVersions((id) => id.startsWith('m-'), 2);
  const r = v.reader(0n);
  v.setBaseline(0n);
  r.observe([ev('m-1', 1, 1n), ev('m-2', 1, 2n)]);
  t.equal(v.latest('m-1'), 1);
  t.equal(v.latest('m-3'), 0, 'nothing dropped yet: a stream never seen has no event since the start');
  r.observe([ev('m-1', 2, 3n), ev('m-3', 1, 4n)]);
  t.equal(v.latest('m-2'), Number.POSITIVE_INFINITY, 'the least recently moved stream was dropped: unknown, not 0');
  t.equal(v.latest('m-1'), 2, 'a stream that moved recently is kept');
  t.equal(v.latest('m-3'), 1);
  t.equal(v.latest('m-4'), Number.POSITIVE_INFINITY, 'once any was dropped, an unseen stream may be a dropped one');
});

t.test('a closed reader is dropped; what it covered stays covered', async (t) => {
  const v = watched();
  v.setBaseline(0n);
  const r = v.reader(0n);
  r.observe([ev('m-1', 1, 1n), ev('m-1', 2, 2n)]);
  t.equal(v.readerCount, 1);
  r.close();
  t.equal(v.readerCount, 0, 'dropped');
  t.equal(v.position, 2n, 'the position does not go back');
  t.equal(v.latest('m-1'), 2, 'nor the versions seen');
  r.close();
  t.equal(v.readerCount, 0, 'closing twice is harmless');
  const next = v.reader(2n);
  next.observe([ev('m-1', 3, 3n)]);
  t.equal(v.position, 3n, 'a reader that starts where the covered part ends carries it on');
});
