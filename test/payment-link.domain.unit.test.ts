// The payment link aggregate (CONTRACT §16): create rules, deactivation once, places held by pending
// payins (completed + pending < max_payments), payments ended once, and the status at a given time.
import t from 'tap';
import * as L from '../domain/payment-link.ts';
import * as P from '../domain/payin.ts';
import type { QuoteCreated } from '../domain/quote-pricing.ts';
import { deciderSpec } from './helpers/spec.ts';
import { attemptIds, attemptQuoteId, asFormError, checkPayer, type PayerInput } from '../commands/payment-link-attempts.ts';
import { DomainError } from '../domain/errors.ts';
import { linkBaseUrl, paymentLinkRecord, renderPaymentLink } from '../projections/views/payment-link.ts';

const at = '2026-06-01T10:00:00.000Z';
const now = new Date(at);
const later = new Date('2026-06-01T11:00:00.000Z');
const created: L.PaymentLinkCreated = {
  payment_link_id: 'l-1', merchant_id: 'm-1', amount: '5000', currency: 'XAF', description: 'Robe wax', customer_id: null,
  expires_at: null, max_payments: 2, metadata: { order: '42' }, at,
};
const createdE: L.PaymentLinkEvent = { type: 'payment_link.created', data: created };
const create = (patch: Partial<L.CreatePaymentLink> = {}): L.PaymentLinkCommand => ({
  type: 'CreatePaymentLink',
  data: {
    linkId: 'l-1', merchantId: 'm-1', amount: '5000', currency: 'XAF', description: 'Robe wax', customerId: null,
    expiresAt: null, maxPayments: 2, metadata: { order: '42' }, at, ...patch,
  },
});
const start = (payinId: string, when = now): L.PaymentLinkCommand => ({ type: 'StartPayment', data: { payinId, now: when, at: when.toISOString() } });
const end = (payinId: string, outcome: L.PaymentOutcome): L.PaymentLinkCommand => ({ type: 'EndPayment', data: { payinId, outcome, at } });
const started = (payinId: string): L.PaymentLinkEvent => ({ type: 'payment_link.payment_started', data: { payment_link_id: 'l-1', payin_id: payinId, at } });
const ended = (payinId: string, outcome: L.PaymentOutcome): L.PaymentLinkEvent =>
  ({ type: 'payment_link.payment_ended', data: { payment_link_id: 'l-1', payin_id: payinId, outcome, at } });
const deactivated: L.PaymentLinkEvent = { type: 'payment_link.deactivated', data: { payment_link_id: 'l-1', at } };
const given = (events: L.PaymentLinkEvent[]) => deciderSpec(L.paymentLinkDecider).given(events);

t.test('create: validated, normalised, once', async (t) => {
  given([]).when(create({ amount: '5000.00', description: '  Robe wax ' })).then(t, [createdE], 'the amount and description normalised');
  given([createdE]).when(create()).thenNothing(t, 'a retried create decides nothing');
  given([createdE]).when(create({ merchantId: 'm-2' })).thenThrows(t, 'idempotency_conflict', "another merchant's id");
  const field = (patch: Partial<L.CreatePaymentLink>, code: string) =>
    given([]).when(create(patch)).thenThrows(t, code, JSON.stringify(patch))?.details?.map((d) => d.field);
  t.same(field({ amount: '99' }, 'amount_out_of_range'), ['amount'], 'below the catalogue minimum');
  t.same(field({ amount: '1000001' }, 'amount_out_of_range'), ['amount'], 'above the catalogue maximum');
  t.same(field({ amount: '100.5' }, 'bad_request'), ['amount']);
  t.same(field({ currency: 'EUR' }, 'bad_request'), ['currency']);
  t.same(field({ description: '   ' }, 'bad_request'), ['description']);
  t.same(field({ description: 'x'.repeat(L.MAX_DESCRIPTION_LENGTH + 1) }, 'bad_request'), ['description']);
  t.same(field({ expiresAt: '2026-06-01T09:59:59.000Z' }, 'bad_request'), ['expires_at'], 'expires_at in the past');
  t.same(field({ expiresAt: at }, 'bad_request'), ['expires_at'], 'expires_at now');
  t.same(field({ maxPayments: 0 }, 'bad_request'), ['max_payments']);
  t.same(field({ maxPayments: 1.5 }, 'bad_request'), ['max_payments']);
  given([]).when(create({ maxPayments: null, expiresAt: '2026-06-02T10:00:00+01:00' }))
    .thenMatch(t, [{ data: { max_payments: null, expires_at: '2026-06-02T09:00:00.000Z' } }], 'unlimited; expires_at in UTC');
});

t.test('deactivate: once, only by the link\'s merchant', async (t) => {
  const deactivate = (merchantId = 'm-1'): L.PaymentLinkCommand => ({ type: 'DeactivatePaymentLink', data: { merchantId, at } });
  given([createdE]).when(deactivate()).then(t, [deactivated]);
  given([createdE, deactivated]).when(deactivate()).thenNothing(t, 'again: nothing');
  given([createdE]).when(deactivate('m-2')).thenThrows(t, 'not_found', "another merchant's link");
  given([]).when(deactivate()).thenThrows(t, 'not_found', 'no link');
  t.equal(L.linkStatus(given([createdE, deactivated]).state, now), 'inactive');
});

t.test('places: pending payins hold them; a failed one frees its place; completed ones keep theirs', async (t) => {
  given([createdE]).when(start('p-1')).then(t, [started('p-1')]);
  given([createdE, started('p-1')]).when(start('p-1')).thenNothing(t, 'the same payin again');
  const busy = given([createdE, started('p-1'), started('p-2')]).when(start('p-3')).thenThrows(t, 'payment_link_busy', 'two places held by pending payins at max_payments 2');
  t.ok(busy?.message.includes('pending'));
  given([createdE, started('p-1'), started('p-2'), ended('p-1', 'failed')]).when(start('p-3')).then(t, [started('p-3')], 'a failed payin freed its place');
  given([createdE, started('p-1'), started('p-2'), ended('p-1', 'completed')]).when(start('p-3'))
    .thenThrows(t, 'payment_link_busy', 'one completed, one pending: full, but not completed');
  const done = given([createdE, started('p-1'), started('p-2'), ended('p-1', 'completed'), ended('p-2', 'completed')]);
  t.equal(L.linkStatus(done.state, now), 'completed', 'completed count reaching max_payments');
  t.equal(done.state.completed, 2, 'payments_count');
  const closed = done.when(start('p-3')).thenThrows(t, 'payment_link_closed', 'a completed link takes no payment');
  t.same(closed?.details, [{ field: 'status', message: 'completed' }], 'the status in the details');
  given([createdE, deactivated]).when(start('p-1')).thenThrows(t, 'payment_link_closed', 'an inactive link');
  const unlimited = { ...createdE, data: { ...created, max_payments: null } } as L.PaymentLinkEvent;
  given([unlimited, started('p-1'), started('p-2'), ended('p-1', 'completed')]).when(start('p-3')).then(t, [started('p-3')], 'unlimited');
});

t.test('end: once, only a pending payin of the link', async (t) => {
  given([createdE, started('p-1')]).when(end('p-1', 'completed')).then(t, [ended('p-1', 'completed')]);
  given([createdE, started('p-1'), ended('p-1', 'completed')]).when(end('p-1', 'completed')).thenNothing(t, 'a redelivered outcome');
  given([createdE, started('p-1'), ended('p-1', 'failed')]).when(end('p-1', 'completed')).thenNothing(t, 'ended already');
  given([createdE]).when(end('p-9', 'completed')).thenNothing(t, 'a payin that never took a place');
});

t.test('status: expired from expires_at at the time asked; inactive and completed first', async (t) => {
  const expiring = { ...createdE, data: { ...created, expires_at: '2026-06-01T10:30:00.000Z' } } as L.PaymentLinkEvent;
  t.equal(L.linkStatus(given([expiring]).state, now), 'active');
  t.equal(L.linkStatus(given([expiring]).state, later), 'expired');
  t.equal(L.statusOf(L.statusFacts(given([expiring]).state)), 'active', 'without a time: what the events make it');
  t.equal(L.linkStatus(given([expiring, deactivated]).state, later), 'inactive');
  given([expiring]).when(start('p-1', later)).thenThrows(t, 'payment_link_closed', 'an expired link takes no payment');
});

t.test('a payin through a link carries its id; any other payin\'s event is as before', async (t) => {
  const quote: QuoteCreated = {
    quote_id: 'q-1', merchant_id: 'm-1', customer_id: null, flow_type: 'payin',
    send_amount: '5000', send_currency: 'XAF', receive_amount: '4925', receive_currency: 'XAF', total_fee: '75',
    country_code: 'CM', operator_code: 'CM_MTN_MOMO', rail_type: 'mobile_money', corridor_code: null, corridor_type: null,
    payer_operator_code: 'CM_MTN_MOMO', recipient_operator_code: null, payin_amount: null, payin_currency: null, payout_amount: null, payout_currency: null,
    pricing: { percent: '1.5', fixed: '0', percent_fee: '75', fixed_fee: '0', total_fee: '75', fee_currency: 'XAF', fx_rate: '1', fixed_side: 'send' },
    wallet_impact: { effects: [] }, expires_at: '2026-06-01T10:15:00.000Z', at,
  };
  const command = (paymentLinkId?: string): P.PayinCommand => ({
    type: 'CreatePayin',
    data: {
      payinId: 'p-1', merchantId: 'm-1', customerId: 'c-1', quote, otpSupplied: false, metadata: {}, availability: {}, at, paymentLinkId,
      source: { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: '+237670000001' },
    },
  });
  const [through] = P.payinDecider.decide(command('l-1'), P.payinDecider.initialState());
  t.equal((through!.data as P.PayinCreated).payment_link_id, 'l-1');
  const [plain] = P.payinDecider.decide(command(), P.payinDecider.initialState());
  t.notOk(Object.hasOwn(plain!.data as object, 'payment_link_id'), 'no payment_link_id key at all on a payin of no link');
});

t.test('attempts: ids derived from (link, attempt), distinct per purpose', async (t) => {
  const a = attemptIds('l-1', 'attempt-1');
  t.same(attemptIds('l-1', 'attempt-1'), a, 'the same attempt: the same ids');
  t.not(attemptIds('l-1', 'attempt-2').payinId, a.payinId, 'another attempt: another payin');
  t.not(attemptIds('l-2', 'attempt-1').payinId, a.payinId, 'another link: another payin');
  t.equal(new Set([a.payinId, a.customerId, attemptQuoteId('l-1', 'attempt-1', 'CM_MTN_MOMO')]).size, 3);
  t.equal(attemptQuoteId('l-1', 'attempt-1', 'CM_MTN_MOMO'), attemptQuoteId('l-1', 'attempt-1', 'CM_MTN_MOMO'), 'the same form: one quote');
  t.not(attemptQuoteId('l-1', 'attempt-1', 'CM_ORANGE_MOMO'), attemptQuoteId('l-1', 'attempt-1', 'CM_MTN_MOMO'), 'another operator: another quote');
  t.match(a.payinId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a UUID v4');
});

t.test('the payer\'s fields: checked before anything, named by the form', async (t) => {
  const input: PayerInput = { countryCode: 'CM', operatorCode: 'CM_MTN_MOMO', phone: '670000001', name: ' Awa Diop ', otp: undefined };
  t.same(checkPayer(input, created), { countryCode: 'CM', operatorCode: 'CM_MTN_MOMO', phone: '+237670000001', name: 'Awa Diop', otp: undefined });
  const fields = (patch: Partial<typeof input>, link = created) => {
    try {
      checkPayer({ ...input, ...patch }, link);
      return [];
    } catch (err) {
      return (err as DomainError).details?.map((d) => d.field);
    }
  };
  t.same(fields({ countryCode: 'FR' }), ['country_code', 'phone']);
  t.same(fields({ countryCode: 'SN', operatorCode: 'SN_WAVE_MOMO', phone: '+221770000001' }), ['country_code'], 'a XOF country for a XAF link');
  t.same(fields({ operatorCode: 'SN_WAVE_MOMO' }), ['operator_code'], 'an operator of another country');
  t.same(fields({ phone: '+221770000001' }), ['phone'], 'a phone of another country');
  t.same(fields({ name: ' ' }), ['name']);
  t.same(fields({ name: undefined }, { ...created, customer_id: 'c-1' }), [], 'the link\'s customer: no name asked');
  t.same(fields({ otp: '12' }), ['otp']);
  const xof = { ...created, currency: 'XOF' as const };
  try {
    checkPayer({ countryCode: 'SN', operatorCode: 'SN_ORANGE_MOMO', phone: '+221770000001', name: 'Awa', otp: undefined }, xof);
    t.fail('an OTP is required');
  } catch (err) {
    t.equal((err as DomainError).code, 'otp_required');
    t.same((err as DomainError).details?.map((d) => d.field), ['otp']);
  }
  const renamed = asFormError(new DomainError('quote_mismatch', 'x', [{ field: 'source.phone', message: 'm' }])) as DomainError;
  t.same(renamed.details, [{ field: 'phone', message: 'm' }], 'a payin field renamed to the form\'s');
  const operator = asFormError(new DomainError('operator_not_enabled', 'not enabled')) as DomainError;
  t.same(operator.details?.map((d) => d.field), ['operator_code'], 'an operator refusal names operator_code');
});

t.test('the view: status and URLs rendered at read time', async (t) => {
  const expiring = { ...createdE, data: { ...created, expires_at: '2026-06-01T10:30:00.000Z' } } as L.PaymentLinkEvent;
  const record = paymentLinkRecord(given([expiring, started('p-1')]).state);
  t.match(record, { id: 'l-1', payments_count: 0, pending_payments: 1, deactivated_at: null });
  const base = linkBaseUrl('https://pay.example.com/', 'api.internal:3000', 'http://127.0.0.1:3000');
  t.equal(base, 'https://pay.example.com', 'PUBLIC_BASE_URL first, without its trailing slash');
  t.match(renderPaymentLink(record, now, base), { url: 'https://pay.example.com/pay/l-1', qr_svg_url: 'https://pay.example.com/pay/l-1/qr.svg', status: 'active' });
  t.equal(renderPaymentLink(record, later, base).status, 'expired', 'expired once read after expires_at');
  t.equal(linkBaseUrl(undefined, 'shop.example:8080', 'http://127.0.0.1:3000'), 'http://shop.example:8080', 'else the origin the request reached');
  t.equal(linkBaseUrl(undefined, 'evil.example/<script>', 'http://127.0.0.1:3000'), 'http://127.0.0.1:3000', 'a Host that is not a host: the service\'s own address');
  t.equal(linkBaseUrl(undefined, undefined, 'http://127.0.0.1:3000'), 'http://127.0.0.1:3000');
});
