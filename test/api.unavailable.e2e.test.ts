// A database that is briefly unreachable answers 503 service_unavailable with Retry-After (not a 500),
// keeps nothing of the request, and the merchant's retry with the same Idempotency-Key succeeds once.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { isDependencyUnavailable } from '../api/unavailable.ts';

t.test('what counts as a dependency being unavailable', async (t) => {
  const pg = (code: string) => Object.assign(new Error('server said no'), { code });
  t.ok(isDependencyUnavailable(pg('57P01')), 'admin shutdown (restart)');
  t.ok(isDependencyUnavailable(pg('57P03')), 'starting up');
  t.ok(isDependencyUnavailable(pg('08006')), 'connection failure');
  t.ok(isDependencyUnavailable(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })));
  t.ok(isDependencyUnavailable(new Error('Connection terminated unexpectedly')));
  t.ok(isDependencyUnavailable(new Error('append failed', { cause: pg('57P01') })), 'wrapped in cause');
  t.notOk(isDependencyUnavailable(pg('23505')), 'a unique violation is a bug, not an outage');
  t.notOk(isDependencyUnavailable(new Error('boom')));
  t.notOk(isDependencyUnavailable(undefined));
});

t.test('an append during a database restart: 503 with Retry-After, then the retry creates it once', async (t) => {
  const h = await startTestApp();
  t.teardown(() => h.stop());
  const m = await h.newMerchant();
  const store = h.app.services.store;
  const original = store.append.bind(store);
  store.append = async () => { throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }); };
  const body = { first_name: 'Ama', last_name: 'Test', phone: '+237670000001', country_code: 'CM' };
  let down;
  try {
    down = await h.as(m, 'POST', '/customers', body, { idem: 'restart-1' });
  } finally {
    store.append = original;
  }
  t.equal(down.status, 503);
  t.equal(down.body.error.code, 'service_unavailable');
  t.equal(down.headers.get('retry-after'), '1');
  t.notMatch(down.text, /administrator command/, 'no internals in the answer');

  const retry = await h.as(m, 'POST', '/customers', body, { idem: 'restart-1' });
  t.equal(retry.status, 201, 'the claim was released: the retry runs');
  const again = await h.as(m, 'POST', '/customers', body, { idem: 'restart-1' });
  t.equal(again.body.id, retry.body.id, 'and is replayed after that');
  const list = await h.as(m, 'GET', '/customers');
  t.equal(list.body.data.length, 1, 'exactly one customer');
});
