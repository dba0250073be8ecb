// Refunds in the merchant dashboard (CONTRACT §9, issue 33 point 1): a payin's page shows its
// refunds and refunds it, in part or in full, after a confirmation, once per form (a resent form
// refunds nothing more), CSRF-checked, only the merchant's own payin.
import t from 'tap';
import { startTestApp, type MerchantCreds } from './helpers/app.ts';
import { FormClient, signedInClient, type Page } from './helpers/dashboard.ts';
import { leg, newCustomer, party, quote, settled, topUp, until, wallet } from './helpers/money.ts';

const h = await startTestApp();
t.teardown(() => h.stop());

async function completedPayin(m: MerchantCreds): Promise<any> {
  const customer = await newCustomer(h, m, 'CM', '+237670000001');
  const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', '+237670000001') }, { idem: true });
  if (p.status !== 201) throw new Error(`payin failed: ${p.status} ${p.text}`);
  return settled(h, m, 'payins', p.body.id, 'completed');
}
const refundsOf = async (m: MerchantCreds, payinId: string) => (await h.as(m, 'GET', `/refunds?payin_id=${payinId}`)).body.data as any[];
/** The hidden fields of the confirmation page's form. */
const hidden = (p: Page) => Object.fromEntries([...p.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((x) => [x[1]!, x[2]!]));

t.test('a payin\'s page refunds it in part, then in full, each confirmed and done once', async (t) => {
  const m = await h.newMerchant();
  await topUp(h, m, 'XAF', '10000');
  const p = await completedPayin(m);
  const c = await signedInClient(h, m.merchantId, 'refunds@example.com');
  const path = `/dashboard/payins/${p.id}`;
  const action = `${path}/refunds`;

  const page = await c.get(path);
  t.equal(page.status, 200);
  t.match(page.text, /<h2 id="refunds-h">Refunds<\/h2>/);
  t.match(page.text, /No refund yet/);
  t.ok(FormClient.nonce(page, action), 'a refund form with its one-time nonce');

  const asked = await c.submit(path, action, { amount: '2000', reason: 'Damaged item' });
  t.equal(asked.status, 200, 'a confirmation first');
  t.match(asked.text, /Refund this payin\?/);
  t.same(await refundsOf(m, p.id), [], 'nothing refunded before the confirmation');
  const confirm = hidden(asked);
  t.match(confirm, { amount: '2000', reason: 'Damaged item', confirmed: 'yes', form_nonce: /^[A-Za-z0-9_-]{22}$/ });

  const made = await c.post(action, confirm);
  t.equal(made.status, 303);
  t.equal(made.location, `${path}?done=refunded`);
  const [first] = await refundsOf(m, p.id);
  t.match(first, { amount: '2000', reason: 'Damaged item', payin_id: p.id });
  t.equal((await h.as(m, 'GET', `/refunds/${first.id}/events`)).body.data[0].actor, `dashboard:${(await h.app.services.knex('dashboard_users').where({ email: 'refunds@example.com' }).first('id')).id}`, 'the dashboard user is the actor');
  const again = await c.post(action, confirm);
  t.equal(again.status, 409, 'the same form again');
  t.match(again.text, /already sent/);
  t.equal((await refundsOf(m, p.id)).length, 1, 'refunded once');

  await until('refund completed', async () => (await refundsOf(m, p.id))[0].status === 'completed');
  const after = await c.get(`${path}?done=refunded`);
  t.match(after.text, /Refund created/);
  t.ok(after.text.includes(first.id), 'the refund is listed on the payin\'s page');

  const full = await c.submit(path, action, { amount: '' });
  t.match(full.text, /all that is left to refund/);
  t.equal((await c.post(action, hidden(full))).status, 303);
  const both = await refundsOf(m, p.id);
  t.same(both.map((r) => r.amount).sort(), ['2000', '3000'], 'the rest refunded in full');
  await until('both completed', async () => (await refundsOf(m, p.id)).every((r) => r.status === 'completed'));
  const last = await c.get(path);
  t.equal(FormClient.nonce(last, action), undefined, 'nothing left: no refund form');
  t.match((await h.as(m, 'GET', `/payins/${p.id}`)).body, { refunded_amount: '5000' });
  t.match(await wallet(h, m, 'XAF'), { available: '9925', reserved: '0' });
  const log = await c.get('/dashboard/events?type=refund');
  t.equal(log.status, 200);
  t.match(log.text, /<option value="refund" selected>/, 'the event log filters refunds');
  t.ok(log.text.includes('refund.completed') && !log.text.includes('payin.completed'), 'only the refunds\' events');
});

t.test('refused: too much, another merchant\'s payin, no CSRF token; nothing changes', async (t) => {
  const m = await h.newMerchant();
  const p = await completedPayin(m);
  const c = await signedInClient(h, m.merchantId, 'refusals@example.com');
  const path = `/dashboard/payins/${p.id}`;
  const action = `${path}/refunds`;
  const before = await wallet(h, m, 'XAF');

  const tooMuch = await c.submit(path, action, { amount: '6000' });
  const refused = await c.post(action, hidden(tooMuch));
  t.equal(refused.status, 400);
  t.match(refused.text, /left to refund/);
  const bad = await c.submit(path, action, { amount: '12.5', confirmed: 'yes' });
  t.equal(bad.status, 400, 'a fractional amount');

  const other = await h.newMerchant('Other');
  const o = await signedInClient(h, other.merchantId, 'other@example.com');
  const foreign = await o.submit('/dashboard', action, { amount: '100', confirmed: 'yes' });
  t.equal(foreign.status, 404, 'another merchant\'s payin is not found');
  t.equal((await o.get(path)).status, 404);

  const page = await c.get(path);
  const noToken = await c.post(action, { form_nonce: FormClient.nonce(page, action)!, amount: '100', confirmed: 'yes' });
  t.equal(noToken.status, 403, 'no CSRF token');

  t.same(await refundsOf(m, p.id), [], 'no refund');
  t.same(await wallet(h, m, 'XAF'), before, 'the wallet unchanged');
});
