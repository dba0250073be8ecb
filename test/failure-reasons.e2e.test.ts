// Failure reasons a merchant can act on (CONTRACT §15, issue 41 point 5), over HTTP: a failed payin
// (payer phone …99, …999), payout (recipient …99), refund (amount …99) and transfer disbursement
// (recipient …99) answer `failure_reason` from §15's list and `provider_failure` with the sandbox's
// own code, in GET, in their failed webhooks (the same JSON) and in the shape the OpenAPI document
// declares; what did not fail answers null for both.
import t from 'tap';
import { request, startTestApp } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, topUp, until } from './helpers/money.ts';
import { createTransfer, recipientSN, settledTransfer, transferMerchant } from './helpers/transfers.ts';
import { configureWebhook, startReceiver } from './helpers/webhooks.ts';
import { responseChecker } from './helpers/openapi-responses.ts';
import { verifyWebhook } from '../webhook-verifier/index.ts';
import { FAILURE_REASONS } from '../domain/failure-reasons.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const rx = await startReceiver();
t.teardown(() => rx.close());
const m = await transferMerchant(h, { topUp: { XOF: '100000', XAF: '20000' } });
const secret = await configureWebhook(h, m, rx.url);
const payer = await newCustomer(h, m);
const payee = await newCustomer(h, m, 'SN', '+221770000001');
const check = responseChecker((await request(h.url, 'GET', '/openapi.json')).body);

/** The failed event of a resource, as the merchant's endpoint received and verified it. */
const webhookOf = (id: string, event: string) => until(`${event} ${id} delivered`, async () => rx.deliveries
  .map((d) => verifyWebhook<any>(d.body, d.headers, secret))
  .find((ev) => ev.data.id === id && ev.event === event));

/** GET answers its resource as the document declares it (required fields, enums). */
async function got(path: string): Promise<any> {
  const r = await h.as(m, 'GET', path);
  const { problems } = check({ method: 'GET', path, status: r.status, body: r.body });
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return r.body;
}

const sandbox = (code: string) => ({ provider: 'sandbox', code, message: String });

async function payin(phone: string): Promise<string> {
  const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: payer, source: party('CM', 'CM_MTN_MOMO', phone) }, { idem: true });
  if (p.status !== 201) throw new Error(`payin ${p.status} ${p.text}`);
  await settled(h, m, 'payins', p.body.id);
  return p.body.id;
}

t.test('a failed payin: insufficient_funds (…99), account_not_found (…999), in GET and in payin.failed', async (t) => {
  const id = await payin('+237670000099');
  const body = await got(`/payins/${id}`);
  t.match(body, { status: 'failed', failure_reason: 'insufficient_funds', provider_failure: sandbox('INSUFFICIENT_FUNDS'), failed_at: String });
  t.same(Object.keys(body.provider_failure).sort(), ['code', 'message', 'provider']);
  t.match(body.history.at(-1), { status: 'failed', reason: 'insufficient_funds' }, "the history in the merchant's words too");
  const hook = await webhookOf(id, 'payin.failed');
  t.same(hook.data.object, body, 'payin.failed carries the payin as GET shows it');
  const notFound = await got(`/payins/${await payin('+237670000999')}`);
  t.match(notFound, { status: 'failed', failure_reason: 'account_not_found', provider_failure: sandbox('PAYER_NOT_FOUND') });
  const ok = await got(`/payins/${await payin('+237670000001')}`);
  t.match(ok, { status: 'completed', failure_reason: null, provider_failure: null }, 'completed: null for both');
});

t.test('a failed payout: account_not_found (recipient …99), in GET and in payout.failed', async (t) => {
  const q = await quote(h, m, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000'));
  const p = await h.as(m, 'POST', '/payouts', {
    quote_id: q.id, customer_id: payee, payment_reason_text: 'Invoice 7', recipient: { ...recipientSN('+221770000099'), first_name: 'Awa', last_name: 'Ndiaye' },
  }, { idem: true });
  t.equal(p.status, 201, p.text);
  t.match(p.body, { status: 'pending', failure_reason: null, provider_failure: null }, 'pending: null for both');
  await settled(h, m, 'payouts', p.body.id);
  const body = await got(`/payouts/${p.body.id}`);
  t.match(body, { status: 'failed', failure_reason: 'account_not_found', provider_failure: sandbox('RECIPIENT_NOT_FOUND') });
  t.same((await webhookOf(p.body.id, 'payout.failed')).data.object, body, 'payout.failed carries the payout as GET shows it');
});

t.test('a failed refund: provider_error (REFUND_REJECTED, amount …99), in GET and in refund.failed', async (t) => {
  const payinId = await payin('+237670000001');
  const r = await h.as(m, 'POST', '/refunds', { payin_id: payinId, amount: '1099' }, { idem: true });
  t.equal(r.status, 201, r.text);
  t.match(r.body, { status: 'pending', failure_reason: null, provider_failure: null });
  const body = await until('refund failed', async () => {
    const b = await got(`/refunds/${r.body.id}`);
    return b.status === 'failed' ? b : undefined;
  });
  t.match(body, { failure_reason: 'provider_error', provider_failure: sandbox('REFUND_REJECTED') });
  t.same((await webhookOf(r.body.id, 'refund.failed')).data.object, body, 'refund.failed carries the refund as GET shows it');
});

t.test("a transfer's failed disbursement: on the transfer and on its attempt, in GET and in the webhooks", async (t) => {
  const created = await createTransfer(h, m, { recipient: recipientSN('+221770000099') });
  const body = await settledTransfer(h, m, created.id, 'failed');
  t.same(await got(`/transfers/${created.id}`), body, 'as the document declares it');
  const failure = { failure_reason: 'account_not_found', provider_failure: sandbox('RECIPIENT_NOT_FOUND') };
  t.match(body, { status: 'failed', payin_status: 'completed', payout_status: 'failed', ...failure });
  t.match(body.execution, { collection: { status: 'completed', failure_reason: null, provider_failure: null }, disbursements: [{ attempt: 1, status: 'failed', ...failure }] });
  const payoutFailed = await webhookOf(created.id, 'transfer.payout.failed');
  t.match(payoutFailed.data.object.execution.disbursements, [{ attempt: 1, ...failure }]);
  t.same((await webhookOf(created.id, 'transfer.failed')).data.object, body, 'transfer.failed carries the transfer as GET shows it');
});

t.test('every failure_reason answered is one of the list', async (t) => {
  const reasons = rx.deliveries.map((d) => verifyWebhook(d.body, d.headers, secret).data.object)
    .flatMap((o: any) => [o.failure_reason, ...(o.execution ? [o.execution.collection, ...o.execution.disbursements].map((l: any) => l.failure_reason) : [])])
    .filter((r) => r !== null && r !== undefined);
  t.ok(reasons.length >= 5, 'failures were delivered');
  t.ok(reasons.every((r) => (FAILURE_REASONS as readonly string[]).includes(r)), `all in §15's list: ${[...new Set(reasons)].join(', ')}`);
});
