// The webhook endpoints aggregate (domain/webhook-endpoints.ts): filters, staged rotation, the
// operator's first endpoint, adoption of a URL from before endpoints, refusals.
import t from 'tap';
import { DomainError } from '../domain/errors.ts';
import {
  endpointsDecider as d, signingSecretAt, acceptsEvent, type EndpointCommand, type EndpointsState,
} from '../domain/webhook-endpoints.ts';

const at = (s: number) => new Date(Date.UTC(2026, 10, 26, 8, 0, s)).toISOString();
const run = (state: EndpointsState, c: EndpointCommand) => d.decide(c, state).reduce(d.evolve, state);
const create = (id: string, events: string[] = ['*'], secret = `sealed-${id}`): EndpointCommand =>
  ({ type: 'CreateEndpoint', data: { endpointId: id, url: `https://h.example/${id}`, enabledEvents: events, description: null, sealedSecret: secret, at: at(0) } });

t.test('filters: known names or "*", each once; an endpoint takes what its filter names', async (t) => {
  const s = run(run(d.initialState(), create('a', ['payin.completed', 'payin.completed', 'refund.failed'])), create('b'));
  const [a, b] = s.endpoints;
  t.same(a!.enabledEvents, ['payin.completed', 'refund.failed'], 'duplicates dropped');
  t.ok(acceptsEvent(a!, 'refund.failed'));
  t.notOk(acceptsEvent(a!, 'payout.completed'));
  t.ok(acceptsEvent(b!, 'transfer.completed'), '"*" takes every event');
  t.throws(() => run(s, create('c', ['payin.exploded'])), DomainError, 'an unknown name is refused');
  t.throws(() => run(s, create('c', ['*', 'payin.completed'])), DomainError, '"*" stands alone');
  t.throws(() => run(s, create('c', [])), DomainError, 'an empty filter is refused');
  t.same(d.decide(create('a'), s), [], 'a retried create (same id) appends nothing');
});

t.test('staged rotation: the current secret signs until activates_at, then the new one; 0 switches at once', async (t) => {
  let s = run(d.initialState(), create('a', ['*'], 'old'));
  s = run(s, { type: 'RotateSecret', data: { endpointId: 'a', sealedSecret: 'new', activatesAt: at(30), at: at(10) } });
  const e = s.endpoints[0]!;
  t.equal(signingSecretAt(e, new Date(at(29))), 'old', 'before activates_at: the current one');
  t.equal(signingSecretAt(e, new Date(at(30))), 'new', 'from activates_at: the new one');
  // A later rotation after activation first promotes the new secret, then stages its own.
  s = run(s, { type: 'RotateSecret', data: { endpointId: 'a', sealedSecret: 'newer', activatesAt: at(50), at: at(40) } });
  t.equal(signingSecretAt(s.endpoints[0]!, new Date(at(45))), 'new', 'the promoted secret signs until the next takes over');
  t.equal(signingSecretAt(s.endpoints[0]!, new Date(at(50))), 'newer');
  s = run(s, { type: 'RotateSecret', data: { endpointId: 'a', sealedSecret: 'now', activatesAt: at(60), at: at(60) } });
  t.equal(signingSecretAt(s.endpoints[0]!, new Date(at(60))), 'now', 'activate_after_seconds 0: at once');
  t.equal(s.endpoints[0]!.nextSecret, null);
});

t.test("the operator's PUT: creates the first endpoint for every event, or sets its URL and a new secret at once", async (t) => {
  const put = (url: string, secret: string, s: number): EndpointCommand =>
    ({ type: 'ConfigureFirst', data: { endpointId: `id-${s}`, url, enabledEvents: ['*'], description: null, sealedSecret: secret, at: at(s) } });
  let s = run(d.initialState(), put('https://h.example/1', 's1', 1));
  t.match(s.endpoints, [{ id: 'id-1', url: 'https://h.example/1', enabledEvents: ['*'] }]);
  s = run(s, create('b', ['payin.completed']));
  s = run(s, put('https://h.example/2', 's2', 5));
  t.equal(s.endpoints.length, 2, 'no new endpoint');
  t.match(s.endpoints[0], { id: 'id-1', url: 'https://h.example/2' });
  t.equal(signingSecretAt(s.endpoints[0]!, new Date(at(5))), 's2', 'the new secret at once');
});

t.test('adoption, status, delete and refusals', async (t) => {
  const adopt: EndpointCommand = { type: 'Adopt', data: { endpointId: 'm', url: 'https://old.example', sealedSecret: 'legacy', at: at(0) } };
  let s = run(d.initialState(), adopt);
  t.match(s, { started: true, endpoints: [{ id: 'm', url: 'https://old.example', enabledEvents: ['*'], secretSealed: 'legacy' }] });
  t.same(d.decide(adopt, s), [], 'adopted once');
  s = run(s, { type: 'DisableEndpoint', data: { endpointId: 'm', reason: 'gone', at: at(1) } });
  t.equal(s.endpoints[0]!.status, 'disabled');
  t.same(d.decide({ type: 'DisableEndpoint', data: { endpointId: 'm', reason: 'failing', at: at(2) } }, s), [], 'disabled already: nothing');
  t.same(d.decide({ type: 'UpdateEndpoint', data: { endpointId: 'm', url: 'https://old.example', at: at(3) } }, s), [], 'nothing changed: no event');
  s = run(s, { type: 'DeleteEndpoint', data: { endpointId: 'm', at: at(4) } });
  t.same(s, { started: true, endpoints: [], deleted: ['m'] }, 'deleted; the stream stays started (no URL from before endpoints comes back)');
  for (const c of [
    { type: 'DeleteEndpoint', data: { endpointId: 'x', at: at(5) } },
    { type: 'UpdateEndpoint', data: { endpointId: 'x', status: 'enabled', at: at(5) } },
    { type: 'RotateSecret', data: { endpointId: 'x', sealedSecret: 'z', activatesAt: at(5), at: at(5) } },
  ] as EndpointCommand[]) {
    t.throws(() => d.decide(c, s), { code: 'not_found' }, `${c.type} of an unknown endpoint: not_found`);
  }
});
