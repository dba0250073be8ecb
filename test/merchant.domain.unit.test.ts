// The merchant aggregate as specifications: given these events, when this command, then these
// events (or this refusal). Time, ids and secrets (hashed or sealed) arrive in the command.
import t from 'tap';
import { fold } from '../domain/decider.ts';
import {
  DEFAULT_PRICING, DEFAULT_ROUTING, merchantDecider, requireMerchant, type MerchantCommand, type MerchantEvent,
} from '../domain/merchant.ts';
import { deciderSpec } from './helpers/spec.ts';

const MERCHANT = '22222222-2222-4222-8222-222222222222';
const KEY = '66666666-6666-4666-8666-666666666666';
const AT = '2026-06-01T10:00:00.000Z';
const LATER = '2026-06-01T11:00:00.000Z';

const merchants = deciderSpec(merchantDecider);

const created: MerchantEvent = {
  type: 'merchant.created', data: { merchant_id: MERCHANT, name: 'Acme', routing: DEFAULT_ROUTING, pricing: DEFAULT_PRICING, at: AT },
};
const keyCreated: MerchantEvent = {
  type: 'merchant.api_key_created', data: { key_id: KEY, api_key: 'pk_1', secret_hash: 'hash-1', expires_at: null, at: AT },
};
const keyRevoked: MerchantEvent = { type: 'merchant.api_key_revoked', data: { key_id: KEY, at: LATER } };

const createKey = (expiresAt: string | null, scopes: string[] = ['*']): MerchantCommand => ({
  type: 'CreateApiKey', data: { keyId: KEY, apiKey: 'pk_1', secretHash: 'hash-1', expiresAt, scopes, at: AT },
});
const rotate = (keyId = KEY): MerchantCommand => ({ type: 'RotateApiKey', data: { keyId, secretHash: 'hash-2', graceSeconds: 60, at: LATER } });
const revoke = (keyId = KEY): MerchantCommand => ({ type: 'RevokeApiKey', data: { keyId, at: LATER } });

t.test('given nothing, when a merchant is created, then merchant.created with the default routing and pricing', async (t) => {
  merchants.given([]).when({ type: 'CreateMerchant', data: { merchantId: MERCHANT, name: 'Acme', at: AT } }).then(t, [created]);
  t.match(fold(merchantDecider, [created]), { exists: true, id: MERCHANT, name: 'Acme', status: 'active', createdAt: AT });
});

t.test('given created, when created again with the same id, then nothing (a retried create)', async (t) => {
  merchants.given([created]).when({ type: 'CreateMerchant', data: { merchantId: MERCHANT, name: 'Other', at: LATER } }).thenNothing(t);
});

t.test('given no merchant, every other command is refused with not_found', async (t) => {
  const commands: MerchantCommand[] = [
    { type: 'SetMerchantStatus', data: { status: 'inactive', at: AT } },
    createKey(null), rotate(), revoke(),
    { type: 'ConfigureWebhook', data: { url: 'https://hooks.example/x', sealedSecret: 'sealed', at: AT } },
    { type: 'SetRouting', data: { routing: {}, at: AT } },
    { type: 'SetPricing', data: { pricing: {}, at: AT } },
  ];
  for (const c of commands) merchants.given([]).when(c).thenThrows(t, 'not_found', c.type);
  t.throws(() => requireMerchant(fold(merchantDecider, [])), { code: 'not_found' }, 'nor may a decision read a merchant that does not exist');
  t.doesNotThrow(() => requireMerchant(fold(merchantDecider, [created])));
});

t.test('status: a change is recorded; the status it already has records nothing', async (t) => {
  merchants.given([created]).when({ type: 'SetMerchantStatus', data: { status: 'inactive', at: LATER } })
    .then(t, [{ type: 'merchant.status_changed', data: { status: 'inactive', at: LATER } }]);
  merchants.given([created]).when({ type: 'SetMerchantStatus', data: { status: 'active', at: LATER } }).thenNothing(t);
});

t.test('API key: created with its hashed secret; an expiry not in the future is refused naming expires_at', async (t) => {
  merchants.given([created]).when(createKey('2026-07-01T00:00:00.000Z')).then(t, [{
    type: 'merchant.api_key_created',
    data: { key_id: KEY, api_key: 'pk_1', secret_hash: 'hash-1', expires_at: '2026-07-01T00:00:00.000Z', scopes: ['*'], at: AT },
  }]);
  merchants.given([created]).when(createKey(null)).then(t, [{ ...keyCreated, data: { ...keyCreated.data, scopes: ['*'] } }], 'no expiry');
  const e = merchants.given([created]).when(createKey(AT)).thenThrows(t, 'bad_request');
  t.same(e?.details?.map((d) => d.field), ['expires_at']);
});

t.test('API key scopes: recorded normalised; unknown scopes, "*" beside others and an empty list are refused naming the entry', async (t) => {
  const scopesOf = (scopes: string[]) => {
    const [e] = merchants.given([created]).when(createKey(null, scopes)).events();
    return e?.type === 'merchant.api_key_created' ? e.data.scopes : undefined;
  };
  t.same(scopesOf(['wallets:read', 'payins:read', 'payins:write', 'wallets:read']), ['payins:write', 'wallets:read'],
    'duplicates gone, payins:read dropped beside payins:write, in the resources\' order');
  t.same(scopesOf(['*', '*']), ['*']);
  const unknown = merchants.given([created]).when(createKey(null, ['payins:read', 'payins:delete', 'ledger:read'])).thenThrows(t, 'bad_request');
  t.same(unknown?.details?.map((d) => d.field), ['scopes[1]', 'scopes[2]']);
  const mixed = merchants.given([created]).when(createKey(null, ['payins:read', '*'])).thenThrows(t, 'bad_request');
  t.same(mixed?.details?.map((d) => d.field), ['scopes[1]']);
  const empty = merchants.given([created]).when(createKey(null, [])).thenThrows(t, 'bad_request');
  t.same(empty?.details?.map((d) => d.field), ['scopes']);
});

t.test('API key scopes: a key created before scopes existed (none in its event) may do everything', async (t) => {
  t.same(fold(merchantDecider, [created, keyCreated]).keys[KEY]?.scopes, ['*']);
  const restricted: MerchantEvent = { ...keyCreated, data: { ...keyCreated.data, scopes: ['refunds:read'] } } as MerchantEvent;
  t.same(fold(merchantDecider, [created, restricted]).keys[KEY]?.scopes, ['refunds:read']);
});

t.test('API key rotation: the previous secret stays valid for the grace period; an unknown or revoked key is refused', async (t) => {
  merchants.given([created, keyCreated]).when(rotate()).then(t, [{
    type: 'merchant.api_key_rotated',
    data: { key_id: KEY, secret_hash: 'hash-2', previous_secret_hash: 'hash-1', previous_valid_until: '2026-06-01T11:01:00.000Z', at: LATER },
  }]);
  merchants.given([created, keyCreated]).when(rotate('77777777-7777-4777-8777-777777777777')).thenThrows(t, 'not_found');
  merchants.given([created, keyCreated, keyRevoked]).when(rotate()).thenThrows(t, 'bad_request');
});

t.test('API key revocation: recorded once; an unknown key is refused', async (t) => {
  merchants.given([created, keyCreated]).when(revoke()).then(t, [keyRevoked]);
  merchants.given([created, keyCreated, keyRevoked]).when(revoke()).thenNothing(t, 'already revoked');
  merchants.given([created]).when(revoke()).thenThrows(t, 'not_found');
  t.equal(fold(merchantDecider, [created, keyCreated, keyRevoked]).keys[KEY]?.status, 'revoked');
});

t.test('webhook: the URL and the sealed signing secret are recorded', async (t) => {
  merchants.given([created]).when({ type: 'ConfigureWebhook', data: { url: 'https://hooks.example/x', sealedSecret: 'sealed', at: LATER } })
    .then(t, [{ type: 'merchant.webhook_configured', data: { url: 'https://hooks.example/x', signing_secret_sealed: 'sealed', at: LATER } }]);
});

t.test('webhook secret rotation: a new secret for the URL in force; refused with no URL, or no merchant', async (t) => {
  const configured = { type: 'merchant.webhook_configured' as const, data: { url: 'https://hooks.example/x', signing_secret_sealed: 'old', at: AT } };
  merchants.given([created, configured]).when({ type: 'RotateWebhookSecret', data: { sealedSecret: 'new', at: LATER } })
    .then(t, [{ type: 'merchant.webhook_configured', data: { url: 'https://hooks.example/x', signing_secret_sealed: 'new', at: LATER } }]);
  merchants.given([created]).when({ type: 'RotateWebhookSecret', data: { sealedSecret: 'new', at: LATER } }).thenThrows(t, 'bad_request');
  merchants.given([]).when({ type: 'RotateWebhookSecret', data: { sealedSecret: 'new', at: LATER } }).thenThrows(t, 'not_found');
});

t.test('routing: merged over the current routing, duplicates dropped; unknown codes refused, each named', async (t) => {
  merchants.given([created]).when({
    type: 'SetRouting', data: { routing: { payout_operators: ['SN_WAVE_MOMO', 'SN_WAVE_MOMO'], corridors: ['CM-SN-XAF-XOF'] }, at: LATER },
  }).then(t, [{
    type: 'merchant.routing_set',
    data: { routing: { ...DEFAULT_ROUTING, payout_operators: ['SN_WAVE_MOMO'], corridors: ['CM-SN-XAF-XOF'] }, at: LATER },
  }]);
  const e = merchants.given([created]).when({
    type: 'SetRouting', data: { routing: { kyc_required_operators: ['NOPE'], corridors: ['XX-YY'] }, at: LATER },
  }).thenThrows(t, 'bad_request');
  t.same(e?.details, [
    { field: 'kyc_required_operators', message: 'unknown code NOPE' },
    { field: 'corridors', message: 'unknown code XX-YY' },
  ]);
});

t.test('corridors one at a time: added and removed, the others kept; repeated, nothing; unknown refused (issue 31)', async (t) => {
  const add = (corridor: string): MerchantCommand => ({ type: 'AddCorridor', data: { corridor, at: LATER } });
  const remove = (corridor: string): MerchantCommand => ({ type: 'RemoveCorridor', data: { corridor, at: LATER } });
  const cmSn: MerchantEvent = { type: 'merchant.corridor_added', data: { corridor: 'CM-SN-XAF-XOF', corridors: ['CM-SN-XAF-XOF'], at: LATER } };
  merchants.given([created]).when(add('CM-SN-XAF-XOF')).then(t, [cmSn]);
  merchants.given([created, cmSn]).when(add('SN-CI-XOF-XOF')).then(t, [
    { type: 'merchant.corridor_added', data: { corridor: 'SN-CI-XOF-XOF', corridors: ['CM-SN-XAF-XOF', 'SN-CI-XOF-XOF'], at: LATER } },
  ]);
  merchants.given([created, cmSn]).when(add('CM-SN-XAF-XOF')).thenNothing(t, 'already enabled');
  merchants.given([created, cmSn]).when(remove('CM-SN-XAF-XOF')).then(t, [
    { type: 'merchant.corridor_removed', data: { corridor: 'CM-SN-XAF-XOF', corridors: [], at: LATER } },
  ]);
  merchants.given([created]).when(remove('CM-SN-XAF-XOF')).thenNothing(t, 'not enabled');
  const e = merchants.given([created]).when(add('CM-SN-XOF-XOF')).thenThrows(t, 'bad_request');
  t.same(e?.details?.map((d) => d.field), ['corridor_code']);
  merchants.given([]).when(add('CM-SN-XAF-XOF')).thenThrows(t, 'not_found');
  const routing = fold(merchantDecider, [created, cmSn]).routing;
  t.same(routing, { ...DEFAULT_ROUTING, corridors: ['CM-SN-XAF-XOF'] }, 'the rest of the routing stays');
});

t.test('pricing: merged over the current pricing; a rule a quote could not use is refused naming its field', async (t) => {
  merchants.given([created]).when({ type: 'SetPricing', data: { pricing: { payout: { percent: '0', fixed: '25' } }, at: LATER } })
    .then(t, [{ type: 'merchant.pricing_set', data: { pricing: { ...DEFAULT_PRICING, payout: { percent: '0', fixed: '25' } }, at: LATER } }]);
  const e = merchants.given([created]).when({ type: 'SetPricing', data: { pricing: { payin: { percent: '100.5', fixed: '0' } }, at: LATER } })
    .thenThrows(t, 'bad_request');
  t.same(e?.details?.map((d) => d.field), ['payin.percent']);
});
