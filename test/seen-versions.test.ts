// SeenVersions: the newest version of each watched stream read in the global order, and how far.
import t from 'tap';
import { SeenVersions } from '../src/infra/eventstore/seen-versions.ts';
import type { RecordedEvent } from '../src/infra/eventstore/types.ts';

const ev = (streamId: string, version: number, position: bigint): RecordedEvent => ({
  id: `${streamId}-${version}`, streamId, version, position, type: 't', data: {}, metadata: {}, createdAt: new Date(0),
});

t.test('watched streams only; versions and position never go back', async (t) => {
  const v = new SeenVersions((id) => id.startsWith('m-'));
  t.equal(v.position, 0n, 'nothing read yet');
  t.equal(v.latest('m-1'), 0);
  v.observe([ev('m-1', 1, 10n), ev('x-1', 1, 11n), ev('m-1', 2, 12n)]);
  t.equal(v.latest('m-1'), 2);
  t.equal(v.latest('x-1'), 0, 'an unwatched stream is not kept');
  t.equal(v.position, 12n);
  // Another reader (or a rewound one) going over older events: nothing moves back.
  v.observe([ev('m-1', 1, 10n)]);
  t.equal(v.latest('m-1'), 2);
  t.equal(v.position, 12n);
  v.observe([]);
  t.equal(v.position, 12n, 'an empty batch changes nothing');
});
