// Issue 40 points 2a and 8 on the endpoints aggregate (domain/webhook-endpoints.ts): at most 16 live
// endpoints (the 17th create is refused limit_exceeded; a retried create of a live one is still
// nothing; deleting one frees a place), a deleted endpoint's id is never created again (a retried
// create after DELETE), and the operator's rotation targets the first endpoint as it stands.
import t from 'tap';
import { deciderSpec } from './helpers/spec.ts';
import { endpointsDecider, MAX_ENDPOINTS, signingSecretAt, type EndpointCommand, type EndpointEvent } from '../domain/webhook-endpoints.ts';

const spec = deciderSpec(endpointsDecider);
const at = (s: number) => new Date(Date.UTC(2026, 10, 26, 8, 0, s)).toISOString();
const created = (id: string, o: { adopted?: boolean; at?: string } = {}): EndpointEvent => ({
  type: 'webhook_endpoint.created',
  data: {
    endpoint_id: id, url: `https://h.example/${id}`, enabled_events: ['*'], description: null, signing_secret_sealed: `sealed-${id}`,
    adopted: o.adopted ?? false, at: o.at ?? at(0),
  },
});
const deleted = (id: string): EndpointEvent => ({ type: 'webhook_endpoint.deleted', data: { endpoint_id: id, at: at(1) } });
const create = (id: string): EndpointCommand =>
  ({ type: 'CreateEndpoint', data: { endpointId: id, url: `https://h.example/${id}`, enabledEvents: ['*'], description: null, sealedSecret: `sealed-${id}`, at: at(2) } });
const sixteen = Array.from({ length: MAX_ENDPOINTS }, (_, i) => created(`e${i}`));

t.test('at most 16 live endpoints: the 17th create is refused, a retried one is not, a deleted one frees a place', async (t) => {
  t.equal(MAX_ENDPOINTS, 16, 'CONTRACT §17');
  spec.given(sixteen.slice(0, 15)).when(create('new')).then(t, [created('new', { at: at(2) })], 'the 16th is made');
  const err = spec.given(sixteen).when(create('new')).thenThrows(t, 'limit_exceeded', 'the 17th: limit_exceeded');
  t.match(err?.message, /at most 16/);
  spec.given(sixteen).when(create('e3')).thenNothing(t, 'a retried create of a live endpoint is still nothing, at the limit');
  spec.given([...sixteen, deleted('e3')]).when(create('new')).thenMatch(t, [{ type: 'webhook_endpoint.created', data: { endpoint_id: 'new' } }], 'one deleted: a place again');
});

t.test('the legacy URL adopted counts as one of the 16', async (t) => {
  spec.given([created('m', { adopted: true }), ...sixteen.slice(0, 15)]).when(create('new')).thenThrows(t, 'limit_exceeded');
});

t.test('a deleted endpoint is never created again under its id (a retried create after DELETE)', async (t) => {
  const s = spec.given([created('a'), deleted('a')]);
  t.same(s.state.deleted, ['a'], 'the deleted id is remembered');
  s.when(create('a')).thenThrows(t, 'not_found', 'refused: it stays deleted, no new secret');
  spec.given([created('a'), deleted('a')]).when(create('b')).thenMatch(t, [{ data: { endpoint_id: 'b' } }], 'another id is made');
});

t.test("the operator's rotation: the first endpoint as it stands, at once; none is a bad_request", async (t) => {
  const rotate: EndpointCommand = { type: 'RotateFirst', data: { sealedSecret: 'fresh', at: at(5) } };
  spec.given([]).when(rotate).thenThrows(t, 'bad_request');
  spec.given([created('a'), deleted('a')]).when(rotate).thenThrows(t, 'bad_request', 'every endpoint deleted');
  const given = spec.given([created('a'), created('b'), deleted('a')]);
  given.when(rotate).then(t, [{ type: 'webhook_endpoint.secret_rotated', data: { endpoint_id: 'b', signing_secret_sealed: 'fresh', activates_at: at(5), at: at(5) } }],
    'the first was deleted: the one that is first now');
  const after = given.when(rotate).events().reduce(endpointsDecider.evolve, given.state);
  t.equal(signingSecretAt(after.endpoints[0]!, new Date(at(5))), 'fresh', 'signs at once');
});
