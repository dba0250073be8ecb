// The gateway's provider_legs rows are written set-wise (commands/provider-legs.ts): legs started
// together are one INSERT, their provider references one UPDATE, and each call answers as alone. A
// start writes its row, or reads the one a start before wrote, in one statement (claimLeg), and
// never moves a row there: only a start holding the leg moves it (moveLeg).
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp } from './helpers/app.ts';
import { claimLeg, extendHold, holdStart, legRowOf, moveLeg, releaseStart, setProviderReference, type NewLeg } from '../commands/provider-legs.ts';
import { leg, newCustomer, party, quote, settled, until } from './helpers/money.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;
const newLeg = (reference: string, provider: string, over: Partial<NewLeg> = {}): NewLeg =>
  ({ reference, owner: 'payin', provider, providerLegId: reference, kind: 'collection', createdAt: new Date(), ...over });

t.test('legs started together: one INSERT, one UPDATE; a repeated reference keeps its first row', async (t) => {
  const queries: string[] = [];
  const onQuery = (q: { sql: string }) => { if (q.sql.includes('provider_legs') && !q.sql.includes('sandbox_provider_legs')) queries.push(q.sql); };
  s.knex.on('query', onQuery);
  t.teardown(() => { s.knex.off('query', onQuery); });
  const at = new Date('2026-11-24T20:00:00.000Z');
  const refs = [randomUUID(), randomUUID(), randomUUID()];
  await Promise.all([
    ...refs.map((reference, i) => claimLeg(s, newLeg(reference, 'sandbox', { kind: i === 1 ? 'disbursement' : 'collection', createdAt: at }))),
    claimLeg(s, newLeg(refs[0]!, 'sandbox', { owner: 'payout', kind: 'disbursement' })),
  ]);
  t.equal(queries.filter((q) => /insert into provider_legs/i.test(q)).length, 1, 'one INSERT for four calls');
  queries.length = 0;
  const rows = await Promise.all([
    ...refs.map((r, i) => setProviderReference(s, r, `SBX-${i}`)),
    setProviderReference(s, 'no-such-leg', 'SBX-X'),
  ]);
  t.equal(queries.filter((q) => /^update/i.test(q)).length, 1, 'one UPDATE for four calls');
  t.same(rows.map((r) => r && { provider: r.provider, kind: r.kind, at: new Date(r.created_at).toISOString() }), [
    { provider: 'sandbox', kind: 'collection', at: at.toISOString() },
    { provider: 'sandbox', kind: 'disbursement', at: at.toISOString() },
    { provider: 'sandbox', kind: 'collection', at: at.toISOString() },
    undefined,
  ]);
  const stored = await s.knex('provider_legs').whereIn('reference', refs).select('reference', 'owner', 'provider_reference');
  t.same(Object.fromEntries(stored.map((r: { reference: string; owner: string; provider_reference: string }) => [r.reference, [r.owner, r.provider_reference]])),
    Object.fromEntries(refs.map((r, i) => [r, ['payin', `SBX-${i}`]])), 'the first row of each reference, with its provider reference');
  queries.length = 0;
  const looked = await Promise.all([legRowOf(s, refs[0]!), legRowOf(s, refs[1]!), legRowOf(s, 'no-such-leg'), legRowOf(s, refs[0]!)]);
  t.equal(queries.filter((q) => /^select/i.test(q)).length, 1, 'one SELECT for four lookups (the gateway looks up every leg it starts)');
  t.same(looked, [
    { owner: 'payin', provider: 'sandbox', kind: 'collection' }, { owner: 'payin', provider: 'sandbox', kind: 'disbursement' },
    undefined, { owner: 'payin', provider: 'sandbox', kind: 'collection' },
  ], 'each lookup answered as alone');
});

t.test('a leg\'s start is held by one start at a time, freed by its own release or expiry; the release says whether its provider may have the leg', async (t) => {
  const reference = randomUUID();
  await claimLeg(s, newLeg(reference, 'mtn_momo'));
  const [first, second] = await Promise.all([holdStart(s, reference, 60_000), holdStart(s, reference, 60_000)]);
  t.match(first, { provider: 'mtn_momo', mayHaveIt: false }, 'held, by a first start: MTN never asked');
  t.equal(second, undefined, 'a second start asking at the same moment is told it is held');
  t.equal(await holdStart(s, reference, 60_000), undefined, 'and so is a later one');
  await releaseStart(s, reference, first!.token, false);
  const short = await holdStart(s, reference, 1);
  t.match(short, { mayHaveIt: false }, 'released by a start that never asked MTN (busy): the next one knows MTN does not have it');
  const after = await until('the hold expired', async () => holdStart(s, reference, 60_000));
  t.ok(after.mayHaveIt, 'a dead start\'s hold expires, and MTN may have the leg from it');
  await releaseStart(s, reference, short!.token, false);
  t.equal(await holdStart(s, reference, 60_000), undefined, 'the expired hold\'s late release leaves the new hold in place');
  await releaseStart(s, reference, after.token, true);
  t.match(await holdStart(s, reference, 60_000), { mayHaveIt: true }, 'released by a start that asked MTN: the next one knows');
  const answered = randomUUID();
  await claimLeg(s, newLeg(answered, 'mtn_momo'));
  await setProviderReference(s, answered, 'mtn-ref');
  t.match(await holdStart(s, answered, 60_000), { mayHaveIt: true }, 'a leg MTN answered for (a row from before holds) may be MTN\'s');
});

t.test('a leg moves to another provider only under its start\'s hold', async (t) => {
  const reference = randomUUID();
  const providerOf = async () => ((await s.knex('provider_legs').where({ reference }).first('provider', 'provider_leg_id')) as { provider: string; provider_leg_id: string });
  await claimLeg(s, newLeg(reference, 'mtn_momo'));
  const hold = await holdStart(s, reference, 60_000);
  t.equal(await moveLeg(s, '2026-01-01T00:00:00+00:00', newLeg(reference, 'sandbox'), 60_000), undefined, 'another token moves nothing');
  await setProviderReference(s, reference, 'mtn-ref');
  const moved = await moveLeg(s, hold!.token, newLeg(reference, 'pawapay', { providerLegId: 'pp-id' }), 60_000);
  t.ok(moved, 'the holder moves it, and gets the extended hold\'s token');
  t.same(await providerOf(), { provider: 'pawapay', provider_leg_id: 'pp-id' });
  t.equal((await s.knex('provider_legs').where({ reference }).first('provider_reference')).provider_reference, null, 'MTN\'s reference goes with MTN');
  t.equal(await moveLeg(s, hold!.token, newLeg(reference, 'sandbox'), 60_000), undefined, 'the hold\'s old token no longer moves it');
  t.equal(await holdStart(s, reference, 60_000), undefined, 'the extended hold is still held');
  const extended = await extendHold(s, moved!, reference, 60_000);
  t.ok(extended && extended !== moved, 'the holder extends its hold (before failing the leg), under a new token');
  t.equal(await extendHold(s, moved!, reference, 60_000), undefined, 'not with the old token');
  await releaseStart(s, reference, extended!, false);
  t.equal(await moveLeg(s, extended!, newLeg(reference, 'sandbox'), 60_000), undefined, 'released: nothing moves it');
  t.equal(await extendHold(s, extended!, reference, 60_000), undefined, 'nor extends it');
  t.equal(await claimLeg(s, newLeg(reference, 'mtn_momo')), 'pawapay', 'a later claim (a start that read the routing before the move) moves nothing back');
  t.same(await providerOf(), { provider: 'pawapay', provider_leg_id: 'pp-id' });
});

t.test('legs claimed together: one statement; a new row takes the provider asked, a row already there answers its own', async (t) => {
  const before = randomUUID();
  await claimLeg(s, newLeg(before, 'mtn_momo', { providerLegId: 'mtn-leg-id', createdAt: new Date('2026-11-28T10:00:00.000Z') }));
  const queries: string[] = [];
  const onQuery = (q: { sql: string }) => { if (q.sql.includes('provider_legs')) queries.push(q.sql); };
  s.knex.on('query', onQuery);
  t.teardown(() => { s.knex.off('query', onQuery); });
  const fresh = [randomUUID(), randomUUID()];
  const claim = (reference: string) => claimLeg(s, { reference, owner: 'payin', provider: 'sandbox', providerLegId: reference, kind: 'collection', createdAt: new Date() });
  const providers = await Promise.all([claim(fresh[0]!), claim(before), claim(fresh[1]!), claim(fresh[0]!)]);
  t.equal(queries.length, 1, `one statement for four claims (${queries.length})`);
  t.same(providers, ['sandbox', 'mtn_momo', 'sandbox', 'sandbox'], 'each answered with the provider its row names');
  const kept = await s.knex('provider_legs').where({ reference: before }).first('provider', 'provider_leg_id');
  t.same(kept, { provider: 'mtn_momo', provider_leg_id: 'mtn-leg-id' }, 'the row already there is unchanged: the leg stays where it may be');
  t.same((await s.knex('provider_legs').whereIn('reference', fresh).pluck('provider')).sort(), ['sandbox', 'sandbox'], 'the new rows written');
});

t.test('a payin\'s start with one provider to ask sends no separate read of its row', async (t) => {
  const queries: string[] = [];
  const onQuery = (q: { sql: string }) => { if (/provider_legs/.test(q.sql) && !q.sql.includes('sandbox_provider_legs')) queries.push(q.sql); };
  s.knex.on('query', onQuery);
  t.teardown(() => { s.knex.off('query', onQuery); });
  const m = await h.newMerchant();
  const payer = await newCustomer(h, m);
  const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: payer, source: party('CM', 'CM_MTN_MOMO', '+237670000001') }, { idem: true });
  t.equal(p.status, 201);
  t.equal((await settled(h, m, 'payins', p.body.id as string)).status, 'completed');
  const started = queries.filter((x) => !/^\s*(update|delete)/i.test(x) || /provider_reference/.test(x));
  t.equal(started.filter((x) => /^\s*select reference, owner, provider, kind from provider_legs/i.test(x)).length, 0, 'no lookup of the row before the start');
  t.equal(started.filter((x) => /insert into provider_legs/i.test(x)).length, 1, 'one statement wrote it (and would have read one already there)');
});
