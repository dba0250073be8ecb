// The payer's page under hostile form input (CONTRACT §16: a bad field is the payer's 400, never a
// 5xx): text PostgreSQL cannot store (NUL) in any field, which reached the customer's event and was
// a 500; nothing is created for it.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { attemptOf, cmPayer, get, newLink, post } from './helpers/pay.ts';

const h = await startTestApp();
t.teardown(() => h.stop());

t.test('a NUL in the name, phone or country answers the form again (400), creates nothing', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m, { maxPayments: null });
  for (const [field, value] of [['name', 'Awa\u0000 Ngono'], ['phone', '+237 670 00\u0000 00 01'], ['country_code', 'CM\u0000']] as const) {
    const attempt = attemptOf((await get(h, `/pay/${id}`)).text);
    const r = await post(h, `/pay/${id}`, { ...cmPayer(attempt), [field]: value });
    t.ok(r.status >= 400 && r.status < 500, `${field}: a 4xx (got ${r.status})`);
  }
  const payins = await h.as(m, 'GET', '/payins?limit=100');
  t.equal(payins.body.data.length, 0, 'no payin');
  const customers = await h.as(m, 'GET', '/customers?limit=100');
  t.equal(customers.body.data.length, 0, 'no customer');
});
