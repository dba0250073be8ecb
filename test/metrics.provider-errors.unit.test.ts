// How a failed provider call is counted in provider_errors_total (infra/metrics.ts): by the kind the
// gateway acts on (CONTRACT §15), read from what the adapter threw.
import t from 'tap';
import { Metrics, providerErrorKind } from '../infra/metrics.ts';
import { ProviderInDoubt } from '../infra/providers/http.ts';
import { LegNotTaken } from '../infra/providers/types.ts';

t.test('each kind of failure', async (t) => {
  t.equal(providerErrorKind(new LegNotTaken('mtn_momo unreachable (ECONNREFUSED)')), 'not_taken', 'nothing sent');
  t.equal(providerErrorKind(new LegNotTaken('refused', { failureReason: 'not_allowed', provider: 'mtn_momo', code: 'NOT_ALLOWED', message: 'no' })), 'not_taken', 'a documented refusal');
  t.equal(providerErrorKind(new ProviderInDoubt('mtn_momo call timed out after 15000 ms')), 'in_doubt');
  t.equal(providerErrorKind(new ProviderInDoubt('pawapay answered the collection with HTTP 500')), 'in_doubt', 'in doubt first, whatever its message');
  t.equal(providerErrorKind(new Error('mtn_momo unreachable (ECONNREFUSED)')), 'not_taken', 'unreachable on a status query (MTN rethrows it plain)');
  t.equal(providerErrorKind(new Error('mtn_momo collection 0f… status: HTTP 503')), 'http');
  t.equal(providerErrorKind(new Error('mtn_momo collection token: HTTP 401')), 'http', 'a token refused');
  t.equal(providerErrorKind(new Error('mtn_momo status answer without a status')), 'other');
  t.equal(providerErrorKind('not an error'), 'other');
});

t.test('timeProvider counts an error once, by provider, operation and kind, and rethrows it', async (t) => {
  const m = new Metrics({ defaultMetrics: false });
  await t.rejects(m.timeProvider('pawapay', 'initiate', async () => { throw new ProviderInDoubt('timed out'); }), ProviderInDoubt);
  t.equal(await m.timeProvider('pawapay', 'status', async () => 'ok'), 'ok');
  const text = (await m.render()).text;
  t.match(text, /provider_errors_total\{provider="pawapay",operation="initiate",kind="in_doubt"\} 1/);
  t.notMatch(text, /provider_errors_total\{[^}]*operation="status"/, 'a call that answered is no error');
});
