// The pawaPay v2 adapter (infra/providers/pawapay/) against a simulator of pawaPay's API written from
// pawaPay's documentation (test/simulators/pawapay.ts): request bodies as pawaPay receives them, its
// sandbox test numbers' outcomes and failure codes mapped (CONTRACT §15), idempotency by leg id,
// certain refusals told from doubt (REJECTED, a refused connection, a 5xx, a time-out), and callbacks
// read as hints whose RFC 9421 signature, when present, is verified with pawaPay's published key.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { PawapayProvider } from '../infra/providers/pawapay/index.ts';
import { failureOf, legStatus } from '../infra/providers/pawapay/transformers.ts';
import { ProviderInDoubt } from '../infra/providers/http.ts';
import { uuidV4For } from '../infra/providers/leg-id.ts';
import { CallbackRejected, LegNotTaken, type CallbackRequest, type InitiateLeg, type LegKind } from '../infra/providers/types.ts';
import { OPERATOR_CODES } from '../domain/catalogue.ts';
import { PawapaySimulator, type CallbackMode, type Resource } from './simulators/pawapay.ts';

const TOKEN = `pp-token-${randomUUID()}`;
const KEY_ID = 'HTTP_EC_P256_KEY:1';
let nowMs = Date.now();
const now = () => nowMs;
const sim = await PawapaySimulator.start({ token: TOKEN, signing: { keyId: KEY_ID, ...generateKeyPairSync('ec', { namedCurve: 'P-256' }) }, now });
t.teardown(() => sim.close());

const pawapay = (timeoutMs = 2_000, apiToken = TOKEN) => new PawapayProvider({ baseUrl: sim.baseUrl, apiToken }, { timeoutMs, now });
const adapter = pawapay();

const leg = (kind: LegKind, operatorCode: string, phone: string, over: Partial<InitiateLeg> = {}): InitiateLeg => ({
  reference: randomUUID(), kind, operatorCode, phone, amount: 5000n, currency: 'XAF', paymentId: randomUUID(), ...over,
});
const collection = (phone: string, over: Partial<InitiateLeg> = {}) => leg('collection', 'CM_MTN_MOMO', phone, over);
const payout = (phone: string, over: Partial<InitiateLeg> = {}) => leg('disbursement', 'CM_MTN_MOMO', phone, over);

t.test('serves the operators of CONTRACT §15 and no other', async (t) => {
  const served = OPERATOR_CODES.filter((code) => adapter.serves(code));
  t.same(served.sort(), ['BJ_MOOV_MOMO', 'BJ_MTN_MOMO', 'CI_MTN_MOMO', 'CI_ORANGE_MOMO', 'CI_WAVE_MOMO', 'CM_MTN_MOMO',
    'CM_ORANGE_MOMO', 'SN_FREE_MOMO', 'SN_ORANGE_MOMO', 'SN_WAVE_MOMO']);
  t.notOk(adapter.serves('TG_TOGOCOM_MOMO') || adapter.serves('TG_MOOV_MOMO') || adapter.serves('CI_MOOV_MOMO'), 'Togo and CI Moov: not served');
  t.notOk(adapter.serves('XX_NOPE'));
  const ref = `transfer:${randomUUID()}:collection`;
  t.match(adapter.legId(ref), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a UUID v4');
  t.equal(adapter.legId(ref), uuidV4For(ref), 'derived from the reference alone');
});

t.test('a deposit as pawaPay receives it: provider code, MSISDN digits, amount string, OTP only when given', async (t) => {
  const withOtp = collection('+237653456789', { otp: '123456' });
  const legId = adapter.legId(withOtp.reference);
  t.same(await adapter.initiate(withOtp), { state: 'pending', providerReference: legId }, 'ACCEPTED: pending');
  t.strictSame(sim.initiations('deposits').at(-1), {
    depositId: legId, amount: '5000', currency: 'XAF',
    payer: { type: 'MMO', accountDetails: { phoneNumber: '237653456789', provider: 'MTN_MOMO_CMR' } },
    clientReferenceId: withOtp.paymentId, preAuthorisationCode: '123456',
  }, 'no metadata, no customerMessage');
  t.equal(sim.requests.at(-1)!.headers.authorization, `Bearer ${TOKEN}`, 'Bearer token');
  t.same(await adapter.status(withOtp), { state: 'completed', providerReference: legId }, 'the test number completes');

  const noOtp = leg('collection', 'CM_ORANGE_MOMO', '+237693456789', { paymentId: undefined });
  await adapter.initiate(noOtp);
  t.strictSame(sim.initiations('deposits').at(-1), {
    depositId: adapter.legId(noOtp.reference), amount: '5000', currency: 'XAF',
    payer: { type: 'MMO', accountDetails: { phoneNumber: '237693456789', provider: 'ORANGE_CMR' } },
  }, 'no preAuthorisationCode without an OTP, no clientReferenceId without a payment');
});

t.test('a payout as pawaPay receives it, under a UUID v4 derived from a non-UUID reference', async (t) => {
  const p = payout('+237653456789', { reference: `transfer:${randomUUID()}:payout:1`, amount: 12_345n });
  const legId = adapter.legId(p.reference);
  t.equal((await adapter.initiate(p)).state, 'pending');
  t.strictSame(sim.initiations('payouts').at(-1), {
    payoutId: legId, amount: '12345', currency: 'XAF',
    recipient: { type: 'MMO', accountDetails: { phoneNumber: '237653456789', provider: 'MTN_MOMO_CMR' } },
    clientReferenceId: p.paymentId,
  });
  t.same(await adapter.status({ reference: p.reference, kind: 'disbursement' }), { state: 'completed', providerReference: legId });
});

t.test('the sandbox test numbers: each outcome and failure code mapped', async (t) => {
  const cases: Array<[InitiateLeg, string, string | undefined, string | undefined]> = [
    [collection('+237653456019'), 'failed', 'PAYER_LIMIT_REACHED', 'limit_reached'],
    [collection('+237653456029'), 'failed', 'PAYER_NOT_FOUND', 'account_not_found'],
    [collection('+237653456039'), 'failed', 'PAYMENT_NOT_APPROVED', 'payer_declined'],
    [collection('+237653456069'), 'failed', 'UNSPECIFIED_FAILURE', 'provider_error'],
    [collection('+237653456129'), 'pending', undefined, undefined],
    [leg('collection', 'CM_ORANGE_MOMO', '+237693456049'), 'failed', 'INSUFFICIENT_BALANCE', 'insufficient_funds'],
    [leg('collection', 'BJ_MTN_MOMO', '+22951345039', { currency: 'XOF' }), 'failed', 'PAYMENT_NOT_APPROVED', 'payer_declined'],
    [leg('collection', 'CI_MTN_MOMO', '+2250503456789', { currency: 'XOF' }), 'completed', undefined, undefined],
    [leg('collection', 'SN_ORANGE_MOMO', '+221773456049', { currency: 'XOF', otp: '4321' }), 'failed', 'INSUFFICIENT_BALANCE', 'insufficient_funds'],
    [payout('+237653456089'), 'failed', 'RECIPIENT_NOT_FOUND', 'account_not_found'],
    [leg('disbursement', 'CM_ORANGE_MOMO', '+237693456099'), 'failed', 'WALLET_LIMIT_REACHED', 'limit_reached'],
    [payout('+237653456129'), 'pending', undefined, undefined],
  ];
  for (const [l, state, code, reason] of cases) {
    t.equal((await adapter.initiate(l)).state, 'pending', `${l.phone}: accepted`);
    const s = await adapter.status(l);
    t.equal(s?.state, state, `${l.phone}: ${state}`);
    if (s?.state !== 'failed') continue;
    t.equal(s.reason, code);
    t.same(s.failure, { failureReason: reason, provider: 'pawapay', code, message: `Sandbox: ${code}` });
  }
});

t.test('every pawaPay status maps: COMPLETED completed, FAILED and REJECTED failed, the rest pending', async (t) => {
  const l = collection('+237653456789');
  await adapter.initiate(l);
  const legId = adapter.legId(l.reference);
  for (const status of ['ACCEPTED', 'ENQUEUED', 'PROCESSING', 'IN_RECONCILIATION']) {
    sim.force('deposits', legId, status);
    t.same(await adapter.status(l), { state: 'pending', providerReference: legId }, status);
  }
  sim.force('deposits', legId, 'COMPLETED');
  t.equal((await adapter.status(l))?.state, 'completed');
  sim.force('deposits', legId, 'FAILED', 'PAWAPAY_WALLET_OUT_OF_FUNDS');
  t.match(await adapter.status(l), { state: 'failed', reason: 'PAWAPAY_WALLET_OUT_OF_FUNDS', failure: { failureReason: 'provider_error' } });
  t.match(legStatus({ status: 'REJECTED', failureReason: { failureCode: 'INVALID_PROVIDER' } }, 'x'), { state: 'failed', reason: 'INVALID_PROVIDER' });
  t.same(legStatus({ status: 'SOMETHING_NEW' }, 'x'), { state: 'pending', providerReference: 'x' }, 'an unknown status: pending');
});

t.test('failure codes → failure_reason (CONTRACT §15 table)', async (t) => {
  const table: Record<string, string> = {
    PAYMENT_NOT_APPROVED: 'payer_declined', INSUFFICIENT_BALANCE: 'insufficient_funds', PAYER_NOT_FOUND: 'account_not_found',
    RECIPIENT_NOT_FOUND: 'account_not_found', INVALID_PHONE_NUMBER: 'account_not_found', WALLET_LIMIT_REACHED: 'limit_reached',
    PAYER_LIMIT_REACHED: 'limit_reached', AMOUNT_OUT_OF_BOUNDS: 'limit_reached', UNSPECIFIED_FAILURE: 'provider_error',
    PROVIDER_TEMPORARILY_UNAVAILABLE: 'provider_error', PAYMENT_IN_PROGRESS: 'provider_error', DEPOSIT_ALREADY_REFUNDED: 'provider_error',
  };
  for (const [code, reason] of Object.entries(table)) {
    t.same(failureOf({ failureCode: code, failureMessage: 'm' }), { failureReason: reason, provider: 'pawapay', code, message: 'm' }, code);
  }
  t.match(failureOf(undefined), { failureReason: 'provider_error', code: 'UNSPECIFIED_FAILURE' }, 'no failureReason at all');
  t.match(failureOf({ failureCode: 'toString' }), { failureReason: 'provider_error' }, 'no prototype lookup');
});

t.test('a refund: of the collection\'s depositId, always with amount and currency', async (t) => {
  const c = collection('+237653456789', { amount: 5000n });
  await adapter.initiate(c);
  t.equal((await adapter.status(c))?.state, 'completed');
  const r = leg('refund', 'CM_MTN_MOMO', c.phone, { refundOf: c.reference, amount: 2000n, paymentId: c.paymentId });
  const legId = adapter.legId(r.reference);
  t.same(await adapter.initiate(r), { state: 'pending', providerReference: legId });
  t.strictSame(sim.initiations('refunds').at(-1), {
    refundId: legId, depositId: adapter.legId(c.reference), amount: '2000', currency: 'XAF', clientReferenceId: c.paymentId,
  });
  t.same(await adapter.status({ reference: r.reference, kind: 'refund' }), { state: 'completed', providerReference: legId }, 'at the refunds endpoint');
  sim.force('refunds', legId, 'FAILED', 'RECIPIENT_NOT_FOUND');
  t.match(await adapter.status({ reference: r.reference, kind: 'refund' }), { state: 'failed', failure: { failureReason: 'account_not_found' } });

  const tooMuch = leg('refund', 'CM_MTN_MOMO', c.phone, { refundOf: c.reference, amount: 9000n });
  const err = await adapter.initiate(tooMuch).catch((e: unknown) => e);
  t.ok(err instanceof LegNotTaken, 'more than the deposit: REJECTED, not taken');
  t.match((err as LegNotTaken).failure, { code: 'AMOUNT_TOO_LARGE', failureReason: 'provider_error' });

  const sent = sim.requests.length;
  await t.rejects(adapter.initiate(leg('refund', 'CM_MTN_MOMO', c.phone)), LegNotTaken, 'a refund without refundOf');
  t.equal(sim.requests.length, sent, 'nothing sent');
});

t.test('the same id on every retry; DUPLICATE_IGNORED leads to the status', async (t) => {
  const l = collection('+237653456789');
  const legId = adapter.legId(l.reference);
  const from = sim.requests.length;
  t.equal((await adapter.initiate(l)).state, 'pending');
  t.same(await adapter.initiate(l), { state: 'completed', providerReference: legId }, 'the duplicate answered with the status');
  t.same(sim.requests.slice(from).map((r) => `${r.method} ${r.path}`), ['POST /v2/deposits', 'POST /v2/deposits', `GET /v2/deposits/${legId}`]);
  t.same(sim.initiations('deposits').slice(-2).map((b) => b.depositId), [legId, legId]);
});

t.test('DUPLICATE_IGNORED, then pawaPay unreachable for its status: in doubt, never "not taken"', async (t) => {
  const l = collection('+237653456789');
  await adapter.initiate(l);
  sim.downAfterNextAnswer();
  t.teardown(() => sim.up());
  const err = await pawapay().initiate(l).catch((e: unknown) => e);
  t.ok(err instanceof ProviderInDoubt, `pawaPay has the leg: in doubt (${(err as Error).message})`);
  t.notOk(err instanceof LegNotTaken);
  const status = await pawapay().status(l).catch((e: unknown) => e);
  t.ok(status instanceof ProviderInDoubt, 'a status query with pawaPay unreachable: in doubt, not "never seen" nor "not taken"');
});

t.test('REJECTED: LegNotTaken with the mapped failure, and pawaPay keeps nothing', async (t) => {
  const cases: Array<[InitiateLeg, string, string]> = [
    [collection('+2376534'), 'INVALID_PHONE_NUMBER', 'account_not_found'],
    [collection('+237653456789', { amount: 50n }), 'AMOUNT_OUT_OF_BOUNDS', 'limit_reached'],
    [payout('+237653456789', { amount: 5_000_000n }), 'AMOUNT_OUT_OF_BOUNDS', 'limit_reached'],
    [collection('+237653456789', { currency: 'XOF' }), 'INVALID_CURRENCY', 'provider_error'],
  ];
  for (const [l, code, reason] of cases) {
    const err = await adapter.initiate(l).catch((e: unknown) => e);
    t.ok(err instanceof LegNotTaken, `${code}: not taken`);
    t.match((err as LegNotTaken).failure, { provider: 'pawapay', code, failureReason: reason });
    t.equal(await adapter.status(l), undefined, `${code}: NOT_FOUND`);
  }
  const inactive = await PawapaySimulator.start({ token: TOKEN, inactiveProviders: ['WAVE_SEN'] });
  t.teardown(() => inactive.close());
  const other = new PawapayProvider({ baseUrl: `${inactive.baseUrl}/`, apiToken: TOKEN }, { timeoutMs: 2_000, now });
  const err = await other.initiate(leg('collection', 'SN_WAVE_MOMO', '+221701234567', { currency: 'XOF' })).catch((e: unknown) => e);
  t.match(err, LegNotTaken);
  t.match((err as LegNotTaken).failure, { code: 'INVALID_PROVIDER', failureReason: 'provider_error' }, 'a provider not active on the account');

  const sent = sim.requests.length;
  await t.rejects(adapter.initiate(leg('collection', 'TG_MOOV_MOMO', '+22890112233', { currency: 'XOF' })), LegNotTaken, 'an operator not served');
  t.equal(sim.requests.length, sent, 'nothing sent');
});

t.test('a 500 after pawaPay recorded the leg: in doubt, then the status finds it', async (t) => {
  const l = collection('+237653456789');
  const legId = adapter.legId(l.reference);
  sim.failNextInitiation('error');
  const err = await adapter.initiate(l).catch((e: unknown) => e);
  t.ok(err instanceof ProviderInDoubt, 'in doubt');
  t.notMatch((err as Error).message, TOKEN, 'no token in the message');
  t.equal(sim.transaction('deposits', legId)?.status, 'ACCEPTED', 'pawaPay has it');
  t.same(await adapter.status(l), { state: 'completed', providerReference: legId }, 'found by its status');
});

t.test('a time-out: in doubt, and the leg pawaPay recorded is found', async (t) => {
  const l = payout('+237653456789');
  sim.failNextInitiation('hang');
  const err = await pawapay(150).initiate(l).catch((e: unknown) => e);
  t.ok(err instanceof ProviderInDoubt, 'in doubt');
  t.match((err as Error).message, /timed out after 150 ms/);
  t.equal((await adapter.status({ reference: l.reference, kind: 'disbursement' }))?.state, 'completed');
});

t.test('pawaPay down: LegNotTaken (nothing was sent)', async (t) => {
  await sim.down();
  t.teardown(() => sim.up());
  // A new adapter, with no kept-alive connection: one pawaPay closed could have taken a request (http.ts).
  const err = await pawapay().initiate(collection('+237653456789')).catch((e: unknown) => e);
  t.ok(err instanceof LegNotTaken, 'not taken');
  t.match((err as Error).message, /unreachable \(ECONNREFUSED\)/);
});

t.test('a wrong token: a refusal, and the token is in no message', async (t) => {
  const secret = `wrong-${randomUUID()}`;
  const err = await pawapay(2_000, secret).initiate(collection('+237653456789')).catch((e: unknown) => e);
  t.ok(err instanceof LegNotTaken, '403: not taken');
  t.match((err as LegNotTaken).failure, { code: 'AUTHENTICATION_ERROR' });
  t.notMatch((err as Error).message, secret);
  t.notMatch(JSON.stringify(err), secret);
  const status = await pawapay(2_000, secret).status({ reference: randomUUID(), kind: 'collection' }).catch((e: unknown) => e);
  t.ok(status instanceof ProviderInDoubt, 'a status query refused: asked again later');
  t.notMatch((status as Error).message, secret);
});

t.test('a reference pawaPay never saw: undefined, at each kind\'s endpoint', async (t) => {
  const ref = randomUUID();
  for (const kind of ['collection', 'disbursement', 'refund'] as const) t.equal(await adapter.status({ reference: ref, kind }), undefined, kind);
  t.same(sim.requests.slice(-3).map((r) => r.path), ['deposits', 'payouts', 'refunds'].map((p) => `/v2/${p}/${adapter.legId(ref)}`));
});

// Callbacks arrive at a receiver playing our endpoint, which hands the request to the adapter as the
// service would (raw body, headers, Host as the authority).
const received: CallbackRequest[] = [];
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const rawBody = Buffer.concat(chunks);
    received.push({ method: req.method!, path: req.url!, authority: req.headers.host!, headers: req.headers, rawBody, body: JSON.parse(rawBody.toString('utf8')) });
    res.end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/providers/pawapay/callbacks`;
const reader = pawapay();
const keyFetches = () => sim.requests.filter((r) => r.path === '/v2/public-key/http').length;

async function deliver(resource: Resource, id: string, mode?: CallbackMode): Promise<CallbackRequest> {
  const status = await sim.sendCallback(resource, id, callbackUrl, mode);
  if (status !== 200) throw new Error(`the receiver answered ${status}`);
  return received.at(-1)!;
}

/** A deposit pawaPay completed: what its callbacks are about. */
async function completedDeposit(): Promise<{ legId: string; reference: string; phone: string }> {
  const l = collection('+237653456789');
  await adapter.initiate(l);
  const legId = adapter.legId(l.reference);
  sim.settle('deposits', legId);
  return { legId, reference: l.reference, phone: l.phone };
}

t.test('callbacks: unsigned or validly signed, a hint naming the leg; the public key fetched once', async (t) => {
  const { legId } = await completedDeposit();
  const fetchesBefore = keyFetches();
  t.same(await reader.readCallback(await deliver('deposits', legId, 'unsigned')), { kind: 'hint', legId }, 'unsigned: a hint');
  t.equal(keyFetches(), fetchesBefore, 'no key needed');
  t.same(await reader.readCallback(await deliver('deposits', legId)), { kind: 'hint', legId }, 'signed: a hint');
  t.same(await reader.readCallback(await deliver('deposits', legId)), { kind: 'hint', legId }, 'again');
  t.equal(keyFetches(), fetchesBefore + 1, 'the public key fetched once');
});

t.test('callbacks: a forged, tampered, expired or misdirected signature: ignored', async (t) => {
  const { legId } = await completedDeposit();
  t.match(await reader.readCallback(await deliver('deposits', legId, 'wrong-key')), { kind: 'ignored', why: /does not verify/ }, 'signed with another key');
  t.match(await reader.readCallback(await deliver('deposits', legId, 'tampered')), { kind: 'ignored', why: /Content-Digest/ }, 'a body changed after signing');
  const late = await deliver('deposits', legId);
  nowMs += 10 * 60_000;
  t.match(await reader.readCallback(late), { kind: 'ignored', why: /expired/ }, 'an expired signature');
  nowMs -= 10 * 60_000;
  const signed = await deliver('deposits', legId);
  const halfSigned = { ...signed, headers: { ...signed.headers, 'signature-input': undefined } };
  t.match(await reader.readCallback(halfSigned), { kind: 'ignored', why: /together/ }, 'a Signature without Signature-Input');
  t.match(await reader.readCallback({ ...signed, authority: 'evil.example' }), { kind: 'ignored' }, 'signed for another authority');
  t.match(await reader.readCallback({ ...signed, path: '/elsewhere' }), { kind: 'ignored' }, 'signed for another path');
});

t.test('callbacks: a key id not published fetches the keys again, at most once a minute', async (t) => {
  const { legId } = await completedDeposit();
  await reader.readCallback(await deliver('deposits', legId)); // the published key, known from now on
  const withUnknownKey = async () => {
    const fresh = await deliver('deposits', legId);
    return { ...fresh, headers: { ...fresh.headers, 'signature-input': String(fresh.headers['signature-input']).replace(KEY_ID, 'HTTP_EC_P256_KEY:9') } };
  };
  const before = keyFetches();
  nowMs += 61_000;
  t.match(await reader.readCallback(await withUnknownKey()), { kind: 'ignored', why: /no public key HTTP_EC_P256_KEY:9/ });
  t.equal(keyFetches(), before + 1, 'the keys fetched again');
  await reader.readCallback(await withUnknownKey());
  t.equal(keyFetches(), before + 1, 'not again within a minute');
  nowMs += 61_000;
  await reader.readCallback(await withUnknownKey());
  t.equal(keyFetches(), before + 2, 'again after it');
  t.same(await reader.readCallback(await deliver('deposits', legId)), { kind: 'hint', legId }, 'the known key still verifies');
});

t.test('callbacks: payouts by payoutId, refunds by refundId (though they name their deposit)', async (t) => {
  const p = payout('+237653456789');
  await adapter.initiate(p);
  const payoutId = adapter.legId(p.reference);
  sim.settle('payouts', payoutId);
  t.same(await reader.readCallback(await deliver('payouts', payoutId)), { kind: 'hint', legId: payoutId }, 'a payout callback');
  const deposit = await completedDeposit();
  const r = leg('refund', 'CM_MTN_MOMO', deposit.phone, { refundOf: deposit.reference, amount: 100n });
  await adapter.initiate(r);
  const refundId = adapter.legId(r.reference);
  sim.settle('refunds', refundId);
  const callback = await deliver('refunds', refundId);
  t.equal((callback.body as { depositId?: string }).depositId, deposit.legId, 'a refund callback names its deposit too');
  t.same(await reader.readCallback(callback), { kind: 'hint', legId: refundId }, 'read as the refund');
});

t.test('callbacks: not a JSON object carrying depositId, payoutId or refundId: rejected', async (t) => {
  const { legId } = await completedDeposit();
  const signed = await deliver('deposits', legId);
  for (const body of [[], 'text', null, 42, {}, { depositId: 5 }, { depositId: '' }, { status: 'COMPLETED' }]) {
    const malformed: CallbackRequest = { ...signed, body, rawBody: Buffer.from(JSON.stringify(body)) };
    await t.rejects(reader.readCallback(malformed), CallbackRejected, `malformed: ${JSON.stringify(body)}`);
  }
});
