// The MTN MoMo adapter (infra/providers/mtn-momo) against a simulator of MTN's Open API written from
// MTN's documentation (test/simulators/mtn-momo.ts): statuses and failure reasons (CONTRACT §15),
// what MTN receives (amounts, MSISDNs, currency, X-Reference-Id, callback URL, refunds), the
// answers that mean taken, in doubt or certainly not taken, and the product tokens.
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MtnMomoProvider } from '../infra/providers/mtn-momo/index.ts';
import { ProviderInDoubt } from '../infra/providers/http.ts';
import { uuidV4For } from '../infra/providers/leg-id.ts';
import { LegNotTaken, type CallbackRequest, type InitiateLeg, type ProviderStatus } from '../infra/providers/types.ts';
import { MTN_TEST_NUMBERS, startMtnMomoSimulator, type MtnMomoSimulator, type MtnSimulatorOptions } from './simulators/mtn-momo.ts';

const CREDENTIALS = {
  collection: { subscriptionKey: 'col-subscription-key-0001', apiUser: randomUUID(), apiKey: 'col-api-key-secret-0001' },
  disbursement: { subscriptionKey: 'dis-subscription-key-0002', apiUser: randomUUID(), apiKey: 'dis-api-key-secret-0002' },
};
const SECRETS = [CREDENTIALS.collection.apiKey, CREDENTIALS.collection.subscriptionKey, CREDENTIALS.disbursement.apiKey, CREDENTIALS.disbursement.subscriptionKey];

interface Setup {
  sim: MtnMomoSimulator;
  mtn: MtnMomoProvider;
  clock: { ms: number };
}

interface AdapterOptions {
  timeoutMs?: number;
  publicBaseUrl?: string;
  currencyOverride?: string | undefined;
  apiKey?: string;
  targetEnvironment?: string;
}

async function setup(t: Test, simOptions: Partial<MtnSimulatorOptions> = {}, a: AdapterOptions = {}): Promise<Setup> {
  const clock = { ms: Date.parse('2030-01-01T00:00:00Z') };
  const sim = await startMtnMomoSimulator({ ...CREDENTIALS, now: () => clock.ms, ...simOptions });
  t.teardown(() => sim.down());
  const mtn = new MtnMomoProvider({
    baseUrl: sim.url, targetEnvironment: a.targetEnvironment ?? 'sandbox',
    collection: { ...CREDENTIALS.collection, ...(a.apiKey ? { apiKey: a.apiKey } : {}) },
    disbursement: CREDENTIALS.disbursement,
    currencyOverride: 'currencyOverride' in a ? a.currencyOverride : 'EUR',
  }, { timeoutMs: a.timeoutMs ?? 5_000, publicBaseUrl: a.publicBaseUrl, now: () => clock.ms });
  return { sim, mtn, clock };
}

const leg = (kind: InitiateLeg['kind'], phone: string, extra: Partial<InitiateLeg> = {}): InitiateLeg => ({
  reference: randomUUID(), kind, operatorCode: 'CM_MTN_MOMO', phone, amount: 5000n, currency: 'XAF', ...extra,
});

const caught = (p: Promise<unknown>): Promise<unknown> => p.then(() => undefined, (err: unknown) => err);

/** The failure's reason and code, or the state when it did not fail. */
const outcome = (s: ProviderStatus | undefined) =>
  s?.state === 'failed' ? `${s.failure?.failureReason}:${s.reason}` : s?.state;

t.test('a collection: what MTN receives, pending on 202, then its status', async (t) => {
  const { sim, mtn } = await setup(t);
  const l = leg('collection', '+237670000001', { reference: `transfer:${randomUUID()}:collection`, amount: 15_000n });
  const legId = mtn.legId(l.reference);
  t.match(legId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a UUID v4 for a reference that is not one');
  t.same(await mtn.initiate(l), { state: 'pending', providerReference: legId }, '202: pending under the X-Reference-Id');
  const post = sim.requests.find((r) => r.method === 'POST' && r.path === '/collection/v1_0/requesttopay')!;
  t.same(post.body, {
    amount: '15000', currency: 'EUR', externalId: legId, payerMessage: 'Payment', payeeNote: 'Payment',
    payer: { partyIdType: 'MSISDN', partyId: '237670000001' },
  }, 'integer whole francs as a string, E.164 digits without +, the currency override');
  t.equal(post.headers['x-reference-id'], legId);
  t.equal(post.headers['ocp-apim-subscription-key'], CREDENTIALS.collection.subscriptionKey);
  t.equal(post.headers['x-target-environment'], 'sandbox');
  t.match(post.headers.authorization, /^Bearer tok-collection-/);
  t.equal(post.headers['x-callback-url'], undefined, 'no callback URL without a public base URL');
  t.equal(sim.count('GET '), 0, 'no status query after a 202');
  t.same(await mtn.status(l), { state: 'completed', providerReference: legId });
  t.equal(await mtn.status({ reference: l.reference, kind: 'disbursement' }), undefined, 'asked at the transfer endpoint: never seen there');
  t.equal(await mtn.status({ reference: randomUUID(), kind: 'collection' }), undefined, '404 RESOURCE_NOT_FOUND: never seen');
});

t.test('serves MTN\'s operators in CM, BJ and CI only; the leg id is the same on every call', async (t) => {
  const { mtn } = await setup(t);
  t.same(['CM_MTN_MOMO', 'BJ_MTN_MOMO', 'CI_MTN_MOMO', 'CM_ORANGE_MOMO', 'SN_WAVE_MOMO'].map((c) => mtn.serves(c)), [true, true, true, false, false]);
  const cameroon = await setup(t, { targetEnvironment: 'mtncameroon', currency: 'XAF' }, { targetEnvironment: 'mtncameroon', currencyOverride: undefined });
  t.same(['CM_MTN_MOMO', 'BJ_MTN_MOMO', 'CI_MTN_MOMO'].map((c) => cameroon.mtn.serves(c)), [true, false, false],
    'a production environment is one country\'s MTN: its operator only');
  const id = randomUUID();
  t.equal(mtn.legId(id), id, 'a UUID v4 reference is its own X-Reference-Id');
  t.equal(mtn.legId('transfer:x:collection'), uuidV4For('transfer:x:collection'));
});

t.test('request-to-pay outcomes of MTN\'s sandbox numbers, mapped to failure reasons', async (t) => {
  const { mtn } = await setup(t);
  const expected: Record<string, string | undefined> = {
    '46733123450': 'provider_error:INTERNAL_PROCESSING_ERROR', '46733123451': 'payer_declined:APPROVAL_REJECTED',
    '46733123452': 'expired:EXPIRED', '46733123453': 'pending', '46733123454': 'pending',
    '46733123455': 'account_not_found:PAYER_NOT_FOUND', '46733123456': 'limit_reached:PAYEE_NOT_ALLOWED_TO_RECEIVE',
    '46733123457': 'not_allowed:NOT_ALLOWED', '46733123458': 'not_allowed:NOT_ALLOWED_TARGET_ENVIRONMENT',
    '46733123459': 'provider_error:INVALID_CALLBACK_URL_HOST', '46733123460': 'not_allowed:INVALID_CURRENCY',
    '46733123461': 'provider_error:INTERNAL_PROCESSING_ERROR', '46733123462': 'provider_error:SERVICE_UNAVAILABLE',
    '46733123463': 'expired:COULD_NOT_PERFORM_TRANSACTION', '46733123499': 'completed',
  };
  for (const [phone, want] of Object.entries(expected)) {
    const l = leg('collection', `+${phone}`);
    t.equal((await mtn.initiate(l)).state, 'pending');
    t.equal(outcome(await mtn.status(l)), want, phone);
  }
  const l = leg('collection', `+${MTN_TEST_NUMBERS.rejected}`);
  await mtn.initiate(l);
  t.same(await mtn.status(l), {
    state: 'failed', providerReference: mtn.legId(l.reference), reason: 'APPROVAL_REJECTED',
    failure: { failureReason: 'payer_declined', provider: 'mtn_momo', code: 'APPROVAL_REJECTED', message: 'APPROVAL_REJECTED' },
  }, 'a bare reason: the code is its own message');
});

t.test('transfer outcomes of MTN\'s sandbox numbers (the account-holder check answers first)', async (t) => {
  const { sim, mtn } = await setup(t);
  const expected: Record<string, string | undefined> = {
    // 450: the account holder is "not found" (a 404 the check does not read as inactive): the transfer goes on.
    '46733123450': 'provider_error:INTERNAL_PROCESSING_ERROR',
    '46733123452': 'expired:EXPIRED', '46733123453': 'pending', '46733123454': 'pending',
    '46733123455': 'insufficient_funds:NOT_ENOUGH_FUNDS', '46733123456': 'limit_reached:PAYER_LIMIT_REACHED',
    '46733123457': 'account_not_found:PAYEE_NOT_FOUND', '46733123458': 'not_allowed:NOT_ALLOWED',
    '46733123459': 'not_allowed:NOT_ALLOWED_TARGET_ENVIRONMENT', '46733123460': 'provider_error:INVALID_CALLBACK_URL_HOST',
    '46733123461': 'not_allowed:INVALID_CURRENCY', '46733123462': 'provider_error:INTERNAL_PROCESSING_ERROR',
    '46733123463': 'provider_error:SERVICE_UNAVAILABLE', '46733123498': 'completed',
  };
  for (const [phone, want] of Object.entries(expected)) {
    const l = leg('disbursement', `+${phone}`);
    t.equal((await mtn.initiate(l)).state, 'pending', `${phone} initiated`);
    t.equal(outcome(await mtn.status(l)), want, phone);
  }
  t.equal(sim.count('POST /disbursement/v1_0/transfer'), Object.keys(expected).length, 'every one transferred');
  const transfer = sim.requests.find((r) => r.path === '/disbursement/v1_0/transfer')!;
  t.same((transfer.body as { payee: unknown }).payee, { partyIdType: 'MSISDN', partyId: '46733123450' });
  t.equal(transfer.headers['ocp-apim-subscription-key'], CREDENTIALS.disbursement.subscriptionKey, 'the Disbursements key');
  t.match(transfer.headers.authorization, /^Bearer tok-disbursement-/, 'the Disbursements token');
});

t.test('the account holder is not active: failed PAYEE_NOT_FOUND without a transfer', async (t) => {
  const { sim, mtn } = await setup(t);
  const l = leg('disbursement', '+46733123451'); // MTN's sandbox: AccountHolderActiveMsisdnNotActive
  t.same(await mtn.initiate(l), {
    state: 'failed', providerReference: mtn.legId(l.reference), reason: 'PAYEE_NOT_FOUND',
    failure: { failureReason: 'account_not_found', provider: 'mtn_momo', code: 'PAYEE_NOT_FOUND', message: 'the payee has no active MoMo account' },
  });
  t.equal(sim.count('GET /disbursement/v1_0/accountholder/msisdn/46733123451/active'), 1, 'checked, id type in lower case');
  t.equal(sim.count('POST /disbursement/v1_0/transfer'), 0, 'no transfer');
  sim.accountHolder('237670000077', false);
  t.equal((await mtn.initiate(leg('disbursement', '+237670000077'))).state, 'failed', '{result: false} for any number');
  t.equal(sim.count('POST /disbursement/v1_0/transfer'), 0);
});

t.test('a transfer MTN has under this reference is answered, whatever the payee check says when it is initiated again', async (t) => {
  const { sim, mtn } = await setup(t);
  const l = leg('disbursement', '+237670000078');
  t.equal((await mtn.initiate(l)).state, 'pending', 'MTN took the transfer');
  sim.settle(mtn.legId(l.reference));
  sim.accountHolder('237670000078', false); // the account closed since
  t.equal(outcome(await mtn.initiate(l)), 'completed', 'initiated again (a start after a crash): MTN\'s transfer, not PAYEE_NOT_FOUND');
  t.equal(sim.count('POST /disbursement/v1_0/transfer'), 1, 'not sent again');
  const fresh = leg('disbursement', '+237670000078');
  t.equal(outcome(await mtn.initiate(fresh)), 'account_not_found:PAYEE_NOT_FOUND', 'a transfer MTN never saw: the check answers');
  sim.fault({ method: 'GET', path: '/disbursement/v1_0/transfer/', status: 500, record: false });
  const err = await caught(mtn.initiate(leg('disbursement', '+237670000078')));
  t.ok(err instanceof ProviderInDoubt, `the check says inactive and the transfer's status is unanswered: in doubt (${(err as Error).message})`);
});

t.test('a duplicate (409) whose status cannot be read is in doubt, never "not taken"', async (t) => {
  const { sim, mtn } = await setup(t);
  const l = leg('collection', '+237670000079');
  await mtn.initiate(l);
  sim.fault({ method: 'GET', path: '/collection/v1_0/requesttopay/', status: 500, record: false });
  const err = await caught(mtn.initiate(l));
  t.ok(err instanceof ProviderInDoubt, `in doubt: ${(err as Error).message}`);
});

t.test('the account-holder check failing does not stop the transfer', async (t) => {
  const { sim, mtn } = await setup(t, {}, { timeoutMs: 400 });
  t.equal((await mtn.initiate(leg('disbursement', '+46733123454'))).state, 'pending', 'the check answered 500: transferred');
  sim.fault({ method: 'GET', path: '/disbursement/v1_0/accountholder/', hang: true });
  t.equal((await mtn.initiate(leg('disbursement', '+237670000010'))).state, 'pending', 'the check timed out: transferred');
  t.equal(sim.count('POST /disbursement/v1_0/transfer'), 2);
});

t.test('a reason as {code, message}, and the codes no sandbox number produces', async (t) => {
  const { sim, mtn } = await setup(t, { reasonShape: 'object' });
  const l = leg('collection', '+46733123452');
  await mtn.initiate(l);
  const s = await mtn.status(l);
  t.same(s, {
    state: 'failed', providerReference: mtn.legId(l.reference), reason: 'EXPIRED',
    failure: { failureReason: 'expired', provider: 'mtn_momo', code: 'EXPIRED', message: 'EXPIRED' },
  });
  const planned: Array<[string, string, 'string' | 'object']> = [
    ['TRANSACTION_CANCELED', 'payer_declined', 'object'], ['PAYMENT_NOT_APPROVED', 'payer_declined', 'string'],
    ['SENDER_ACCOUNT_NOT_ACTIVE', 'account_not_found', 'object'], ['PAYER_LIMIT_REACHED', 'limit_reached', 'string'],
    ['SOMETHING_NEW', 'provider_error', 'object'],
  ];
  for (const [i, [code, reason, shape]] of planned.entries()) {
    const phone = `23767000010${i}`;
    sim.plan(phone, { status: 'FAILED', reason: code, message: `MTN says ${code}`, reasonShape: shape });
    const p = leg('collection', `+${phone}`);
    await mtn.initiate(p);
    const got = await mtn.status(p);
    t.same(got?.state === 'failed' && got.failure, {
      failureReason: reason, provider: 'mtn_momo', code, message: shape === 'object' ? `MTN says ${code}` : code,
    }, `${code} as a ${shape}`);
  }
});

t.test('a leg MTN has not settled is pending, whatever its non-final status', async (t) => {
  const { sim, mtn } = await setup(t, { autoSettle: false });
  const l = leg('collection', '+237670000020');
  await mtn.initiate(l);
  t.equal(outcome(await mtn.status(l)), 'pending', 'PENDING');
  t.equal(sim.legs.get(mtn.legId(l.reference))!.status, 'PENDING');
  sim.settle(mtn.legId(l.reference));
  t.equal(outcome(await mtn.status(l)), 'completed', 'settled');
  for (const status of ['CREATED', 'ONGOING'] as const) {
    const phone = status === 'CREATED' ? '237670000021' : '237670000022';
    sim.plan(phone, { status });
    const p = leg('collection', `+${phone}`);
    await mtn.initiate(p);
    sim.settle();
    t.equal(outcome(await mtn.status(p)), 'pending', status);
  }
});

t.test('amounts, MSISDNs and currency as MTN receives them, with and without the override', async (t) => {
  const live = await setup(t, { targetEnvironment: 'mtncameroon', currency: 'XAF' }, { targetEnvironment: 'mtncameroon', currencyOverride: undefined });
  await live.mtn.initiate(leg('disbursement', '+237670000030', { amount: 1_234_567n }));
  const body = live.sim.requests.find((r) => r.path === '/disbursement/v1_0/transfer')!.body as Record<string, unknown>;
  t.same([body.amount, body.currency, body.payee], ['1234567', 'XAF', { partyIdType: 'MSISDN', partyId: '237670000030' }], 'the payment\'s own currency');
  t.equal(live.sim.requests.at(-1)!.headers['x-target-environment'], 'mtncameroon');
  const sandbox = await setup(t, {}, { currencyOverride: undefined });
  const refused = await caught(sandbox.mtn.initiate(leg('collection', '+237670000031')));
  t.ok(refused instanceof LegNotTaken, 'XAF on MTN\'s sandbox: 400, certainly not taken');
  t.same((refused as LegNotTaken).failure, { failureReason: 'not_allowed', provider: 'mtn_momo', code: 'INVALID_CURRENCY', message: 'Currency not supported: XAF.' });
  const bad = await caught(sandbox.mtn.initiate(leg('collection', '0670000031')));
  t.ok(bad instanceof LegNotTaken, 'a phone that is not E.164 is never sent');
  t.equal(sandbox.sim.count('POST /collection/v1_0/requesttopay'), 1);
});

t.test('a retry sends the same X-Reference-Id; 409 RESOURCE_ALREADY_EXIST answers the leg\'s status', async (t) => {
  const { sim, mtn } = await setup(t);
  const l = leg('collection', '+46733123451');
  const first = await mtn.initiate(l);
  const again = await mtn.initiate({ ...l, phone: '+237670000040' });
  t.equal(outcome(again), 'payer_declined:APPROVAL_REJECTED', 'the first leg\'s status, settled when asked');
  t.equal(again.providerReference, first.providerReference);
  const posts = sim.requests.filter((r) => r.path === '/collection/v1_0/requesttopay');
  t.same(posts.map((r) => r.headers['x-reference-id']), [mtn.legId(l.reference), mtn.legId(l.reference)], 'one id for both');
  t.equal(sim.count(`GET /collection/v1_0/requesttopay/${mtn.legId(l.reference)}`), 1, 'one status query');
  t.equal(sim.legs.size, 1, 'one leg at MTN');
});

t.test('a 5xx after MTN recorded the leg is in doubt; its status then finds it', async (t) => {
  const { sim, mtn } = await setup(t);
  const l = leg('collection', '+237670000050');
  sim.fault({ method: 'POST', path: '/collection/v1_0/requesttopay' });
  const err = await caught(mtn.initiate(l));
  t.ok(err instanceof ProviderInDoubt, `in doubt: ${(err as Error).message}`);
  t.notOk(err instanceof LegNotTaken);
  t.equal(outcome(await mtn.status(l)), 'completed', 'MTN has the leg');
  t.equal(outcome(await mtn.initiate(l)), 'completed', 'initiated again: 409, the same leg');
  sim.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', record: false, status: 503, body: { code: 'SERVICE_UNAVAILABLE' } });
  const lost = leg('collection', '+237670000051');
  t.ok(await caught(mtn.initiate(lost)) instanceof ProviderInDoubt, 'a 503 before recording: in doubt too');
  t.equal(await mtn.status(lost), undefined, 'then never seen: safe to initiate again');
  t.equal((await mtn.initiate(lost)).state, 'pending');
});

t.test('a time-out is in doubt', async (t) => {
  const { sim, mtn } = await setup(t, {}, { timeoutMs: 300 });
  await mtn.status({ reference: randomUUID(), kind: 'collection' }); // the token, fetched before the fault
  const l = leg('collection', '+237670000060');
  sim.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', hang: true });
  const err = await caught(mtn.initiate(l));
  t.ok(err instanceof ProviderInDoubt, `in doubt: ${(err as Error).message}`);
  t.equal(outcome(await mtn.status(l)), 'completed', 'MTN had recorded it');
  sim.fault({ method: 'GET', path: '/collection/v1_0/requesttopay/', hang: true });
  t.ok(await caught(mtn.status(l)) instanceof Error, 'a status query that times out throws');
});

t.test('MTN down (connection refused): certainly not taken; a status query throws', async (t) => {
  const { sim, mtn } = await setup(t);
  await mtn.initiate(leg('collection', '+237670000070')); // a token cached
  await sim.down();
  // The adapter's kept-alive connection, closed by MTN, seen closed (one turn of the event loop reads
  // it): a request written on it first would be in doubt (test/providers.http.unit.test.ts).
  await new Promise((r) => setImmediate(r));
  const l = leg('collection', '+237670000071');
  const err = await caught(mtn.initiate(l));
  t.ok(err instanceof LegNotTaken, `not taken: ${(err as Error).message}`);
  const statusErr = await caught(mtn.status(l));
  t.ok(statusErr instanceof Error && !(statusErr instanceof LegNotTaken), 'a status query: an error, not "never seen"');
  const cold = await setup(t);
  await cold.sim.down();
  t.ok(await caught(cold.mtn.initiate(leg('disbursement', '+237670000072'))) instanceof LegNotTaken, 'no token could be fetched: not taken');
  await sim.up();
  t.equal((await mtn.initiate(l)).state, 'pending', 'back up: initiated');
});

t.test('a 4xx that documents a refusal: LegNotTaken with MTN\'s code', async (t) => {
  const { sim, mtn } = await setup(t);
  sim.fault({ method: 'POST', path: '/disbursement/v1_0/transfer', record: false, status: 403 });
  const forbidden = await caught(mtn.initiate(leg('disbursement', '+237670000080')));
  t.ok(forbidden instanceof LegNotTaken);
  t.match((forbidden as LegNotTaken).failure, { failureReason: 'provider_error', code: 'INTERNAL_PROCESSING_ERROR' }, 'the fault\'s default body');
  sim.fault({ method: 'POST', path: '/disbursement/v1_0/transfer', record: false, status: 400, body: { code: 'PAYEE_NOT_FOUND', message: 'Payee does not exist' } });
  const refused = await caught(mtn.initiate(leg('disbursement', '+237670000081')));
  t.same((refused as LegNotTaken).failure, { failureReason: 'account_not_found', provider: 'mtn_momo', code: 'PAYEE_NOT_FOUND', message: 'Payee does not exist' });
  t.equal(sim.legs.size, 0);
  const badId = await caught(mtn.initiate(leg('refund', '+237670000082', { refundOf: undefined })));
  t.ok(badId instanceof LegNotTaken, 'a refund without the collection it refunds is never sent');
});

t.test('tokens: one per product, shared by concurrent callers, reused until 60 s before expiry', async (t) => {
  const { sim, mtn, clock } = await setup(t, { tokenTtlSeconds: 3600 });
  const legs = Array.from({ length: 6 }, (_, i) => leg('collection', `+23767000009${i}`));
  await Promise.all(legs.map((l) => mtn.initiate(l)));
  await Promise.all(legs.map((l) => mtn.status(l)));
  t.equal(sim.count('POST /collection/token/'), 1, 'one token call for twelve requests');
  t.equal(sim.count('POST /disbursement/token/'), 0);
  await mtn.initiate(leg('disbursement', '+237670000099'));
  t.equal(sim.count('POST /disbursement/token/'), 1, 'the Disbursements product has its own');
  const tokenCall = sim.requests.find((r) => r.path === '/collection/token/')!;
  t.equal(tokenCall.headers['content-length'], '0', 'an empty POST says Content-Length: 0');
  t.equal(tokenCall.headers.authorization, `Basic ${Buffer.from(`${CREDENTIALS.collection.apiUser}:${CREDENTIALS.collection.apiKey}`).toString('base64')}`);
  clock.ms += 3_540_000 - 1;
  await mtn.status(legs[0]!);
  t.equal(sim.count('POST /collection/token/'), 1, 'just under 60 s before expiry: reused');
  clock.ms += 1;
  await mtn.status(legs[0]!);
  t.equal(sim.count('POST /collection/token/'), 2, '60 s before expiry: a new one');
});

t.test('a 401 refreshes the token once', async (t) => {
  const { sim, mtn } = await setup(t);
  await mtn.initiate(leg('collection', '+237670000100'));
  sim.expireTokens();
  const l = leg('collection', '+237670000101');
  t.equal((await mtn.initiate(l)).state, 'pending', 'the expired token is replaced and the call made again');
  t.equal(sim.count('POST /collection/token/'), 2);
  t.equal(sim.count('POST /collection/v1_0/requesttopay'), 3, 'the 401, then the retry');
  sim.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', record: false, status: 401, body: { statusCode: 401, message: 'Access denied' }, times: 5 });
  const err = await caught(mtn.initiate(leg('collection', '+237670000102')));
  t.ok(err instanceof LegNotTaken, 'still 401 after one refresh: refused');
  t.equal(sim.count('POST /collection/v1_0/requesttopay'), 5, 'two attempts, not more');
  t.equal(sim.count('POST /collection/token/'), 3, 'one refresh');
});

t.test('wrong credentials: no token, not taken, and no secret in any message', async (t) => {
  const { sim, mtn } = await setup(t, {}, { apiKey: 'not-the-key-secret' });
  const messages: string[] = [];
  const err = await caught(mtn.initiate(leg('collection', '+237670000110')));
  t.ok(err instanceof LegNotTaken);
  messages.push((err as Error).message);
  messages.push((await caught(mtn.status({ reference: randomUUID(), kind: 'collection' })) as Error).message);
  t.equal(sim.count('POST /collection/v1_0/requesttopay'), 0);
  const ok = await setup(t);
  await ok.mtn.initiate(leg('collection', '+237670000111'));
  const token = String(ok.sim.requests.at(-1)!.headers.authorization).replace('Bearer ', '');
  ok.sim.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', status: 500 });
  messages.push((await caught(ok.mtn.initiate(leg('collection', '+237670000112'))) as Error).message);
  ok.sim.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', record: false, status: 401, times: 2 });
  messages.push((await caught(ok.mtn.initiate(leg('collection', '+237670000113'))) as Error).message);
  for (const m of messages) {
    t.notOk([...SECRETS, 'not-the-key-secret', token].some((s) => m.includes(s)), `no secret in "${m}"`);
  }
});

t.test('a refund: the Disbursements refund call, referenceIdToRefund = the collection\'s X-Reference-Id', async (t) => {
  const { sim, mtn } = await setup(t);
  const payin = leg('collection', '+237670000120', { amount: 10_000n });
  await mtn.initiate(payin);
  t.equal(outcome(await mtn.status(payin)), 'completed');
  const refund = leg('refund', '+237670000120', { amount: 2_500n, refundOf: payin.reference });
  t.same(await mtn.initiate(refund), { state: 'pending', providerReference: mtn.legId(refund.reference) });
  const post = sim.requests.find((r) => r.path === '/disbursement/v1_0/refund')!;
  t.same(post.body, {
    amount: '2500', currency: 'EUR', externalId: mtn.legId(refund.reference), payerMessage: 'Refund', payeeNote: 'Refund',
    referenceIdToRefund: mtn.legId(payin.reference),
  });
  t.equal(post.headers['ocp-apim-subscription-key'], CREDENTIALS.disbursement.subscriptionKey);
  t.equal(sim.count('GET /disbursement/v1_0/accountholder'), 0, 'no account-holder check for a refund');
  t.equal(outcome(await mtn.status(refund)), 'completed', 'asked at /disbursement/v1_0/refund/{id}');
  t.equal(sim.count(`GET /disbursement/v1_0/refund/${mtn.legId(refund.reference)}`), 1);
  const stray = leg('refund', '+237670000121', { refundOf: `transfer:${randomUUID()}:collection` });
  await mtn.initiate(stray);
  t.equal(outcome(await mtn.status(stray)), 'provider_error:TRANSACTION_NOT_FOUND', 'a refund of a collection MTN does not have');
});

t.test('the callback URL is sent only with a public base URL; MTN\'s callback reads as a hint', async (t) => {
  const received: CallbackRequest[] = [];
  const { mtn: probe } = await setup(t);
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const legId = /^\/providers\/mtn_momo\/callbacks\/([^/]+)$/.exec(req.url ?? '')?.[1];
      received.push({ method: req.method!, path: req.url!, authority: req.headers.host!, legId, headers: req.headers, rawBody, body: JSON.parse(rawBody.toString()) });
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => receiver.close(() => r())));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
  const { sim, mtn } = await setup(t, { callbacks: 'PUT' }, { publicBaseUrl: base });
  const l = leg('collection', '+46733123452');
  await mtn.initiate(l);
  const legId = mtn.legId(l.reference);
  t.equal(sim.requests.at(-1)!.headers['x-callback-url'], `${base}providers/mtn_momo/callbacks/${legId}`);
  sim.settle();
  await sim.flushCallbacks();
  t.equal(sim.callbacks.length, 1);
  t.equal(sim.callbacks[0]!.status, 200);
  t.equal(received[0]!.method, 'PUT');
  t.same(await mtn.readCallback(received[0]!), { kind: 'hint', legId }, 'a hint naming the leg, whatever the body says');
  t.equal(await probe.readCallback(received[0]!).then((r) => r.kind), 'hint', 'no secret needed to read it');
});

t.test('a callback that is not well-formed is rejected', async (t) => {
  const { mtn } = await setup(t);
  const req = (legId: string | undefined, body: unknown): CallbackRequest => ({
    method: 'POST', path: `/providers/mtn_momo/callbacks/${legId}`, authority: 'example.test', legId, headers: {},
    rawBody: Buffer.from(JSON.stringify(body) ?? ''), body,
  });
  const id = randomUUID();
  t.same(await mtn.readCallback(req(id, { status: 'SUCCESSFUL' })), { kind: 'hint', legId: id });
  t.same(await mtn.readCallback(req(id.toUpperCase(), {})), { kind: 'hint', legId: id }, 'an upper-case id is the same leg');
  for (const [why, r] of [
    ['no leg id', req(undefined, {})], ['a leg id that is not a UUID', req('transfer:1:collection', {})],
    ['an array', req(id, [])], ['null', req(id, null)], ['a string', req(id, 'SUCCESSFUL')],
  ] as const) {
    await t.rejects(mtn.readCallback(r), { name: 'CallbackRejected' }, why);
  }
});

t.test('a status answer MTN did not mean as "never seen" is an error', async (t) => {
  const { sim, mtn } = await setup(t);
  const l = leg('collection', '+237670000130');
  await mtn.initiate(l);
  sim.fault({ method: 'GET', path: '/collection/v1_0/requesttopay/', status: 404, body: { statusCode: 404, message: 'Resource not found' } });
  await t.rejects(mtn.status(l), /HTTP 404/, 'a gateway 404 without RESOURCE_NOT_FOUND');
  sim.fault({ method: 'GET', path: '/collection/v1_0/requesttopay/', status: 500 });
  await t.rejects(mtn.status(l), /HTTP 500/);
  sim.fault({ method: 'GET', path: '/collection/v1_0/requesttopay/', status: 200, body: { amount: '5000' } });
  await t.rejects(mtn.status(l), /without a status/);
  t.equal(outcome(await mtn.status(l)), 'completed');
});

t.test('the simulator refuses what MTN documents as bad requests', async (t) => {
  const { sim } = await setup(t);
  const c = CREDENTIALS.collection;
  const basic = `Basic ${Buffer.from(`${c.apiUser}:${c.apiKey}`).toString('base64')}`;
  const post = (path: string, headers: Record<string, string>, body?: string) =>
    fetch(`${sim.url}${path}`, { method: 'POST', headers, body: body ?? '' }).then(async (r) => ({ status: r.status, body: await r.json().catch(() => undefined) }));
  t.equal((await post('/collection/token/', { authorization: basic })).status, 401, 'a token call without the subscription key');
  t.equal((await post('/collection/token/', { authorization: basic, 'ocp-apim-subscription-key': CREDENTIALS.disbursement.subscriptionKey })).status, 401, 'another product\'s key');
  const token = await post('/collection/token/', { authorization: basic, 'ocp-apim-subscription-key': c.subscriptionKey });
  t.match(token, { status: 200, body: { access_token: /^tok-collection-/, expires_in: 3600 } });
  const headers = {
    authorization: `Bearer ${(token.body as { access_token: string }).access_token}`, 'ocp-apim-subscription-key': c.subscriptionKey,
    'x-target-environment': 'sandbox', 'content-type': 'application/json',
  };
  const body = JSON.stringify({ amount: '100', currency: 'EUR', externalId: '1', payer: { partyIdType: 'MSISDN', partyId: '46733123499' } });
  t.equal((await post('/collection/v1_0/requesttopay', { ...headers, 'x-reference-id': 'not-a-uuid' }, body)).status, 400, 'X-Reference-Id not a UUID');
  t.equal((await post('/collection/v1_0/requesttopay', { ...headers, 'x-reference-id': '6f0f9c56-8d0b-1c3e-9d2a-3b1f5e7a9c01' }, body)).status, 400, 'a UUID, not v4');
  const id = randomUUID();
  t.equal((await post('/collection/v1_0/requesttopay', { ...headers, 'x-reference-id': id }, body)).status, 202);
  t.match(await post('/collection/v1_0/requesttopay', { ...headers, 'x-reference-id': id }, body), { status: 409, body: { code: 'RESOURCE_ALREADY_EXIST' } });
  t.equal((await post('/collection/v1_0/requesttopay', { ...headers, 'x-target-environment': 'mtnbenin', 'x-reference-id': randomUUID() }, body)).status, 400, 'another target environment');
  t.equal((await post('/disbursement/v1_0/transfer', { ...headers, 'x-reference-id': randomUUID() }, body)).status, 401, 'a Collections token on Disbursements');
  const holder = await fetch(`${sim.url}/collection/v1_0/accountholder/MSISDN/46733123499/active`, { headers });
  t.equal(holder.status, 400, 'the id type in upper case');
  t.equal(sim.legs.size, 1);
});
