// A merchant set inactive by the operator (CONTRACT: its keys get 401) stops collecting through its
// payment links too: the payer's page says the link takes no payment (410, no form) and a form
// posted to it creates nothing; set active again, the link takes payments again.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp } from './helpers/app.ts';
import { attemptOf, cmPayer, get, newLink, post } from './helpers/pay.ts';
import { payThroughLink } from '../commands/payment-links.ts';

const h = await startTestApp();
t.teardown(() => h.stop());

t.test('an inactive merchant\'s link takes no payment', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m, { maxPayments: null });
  const attempt = attemptOf((await get(h, `/pay/${id}`)).text);
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/status`, { status: 'inactive' })).status, 200);
  t.equal((await get(h, `/pay/${id}`)).status, 410, 'the page: closed');
  const r = await post(h, `/pay/${id}`, cmPayer(attempt));
  t.equal(r.status, 410, `the form: closed (got ${r.status})`);
  await t.rejects(payThroughLink(h.app.services, {
    linkId: id, attemptId: randomUUID(), countryCode: 'CM', operatorCode: 'CM_MTN_MOMO', phone: '670000001', name: 'Awa Diop', otp: undefined,
  }, { requestId: 'test', actor: 'test' }), { code: 'payment_link_closed' }, 'the command refuses it');
  t.equal((await h.admin('POST', `/admin/merchants/${m.merchantId}/status`, { status: 'active' })).status, 200);
  t.equal((await h.as(m, 'GET', `/payins?payment_link_id=${id}`)).body.data.length, 0, 'no payin');
  t.equal((await post(h, `/pay/${id}`, cmPayer(attempt))).status, 303, 'active again: paid');
});
