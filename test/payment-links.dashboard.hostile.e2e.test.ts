// The dashboard's payment link form under hostile input: text the database cannot store (a NUL in the
// description), or an expiry day that does not exist: the form again as the merchant's error (400),
// never a 500 nor a link expiring another day, and nothing created.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { FormClient, signedInClient } from './helpers/dashboard.ts';

const h = await startTestApp();
t.teardown(() => h.stop());

t.test('a NUL in the description: 400, the form again, no link', async (t) => {
  const m = await h.newMerchant('Boutique Awa');
  const en = await signedInClient(h, m.merchantId, 'links-nul@example.com');
  const form = await en.get('/dashboard/links');
  const r = await en.post('/dashboard/links', {
    csrf_token: FormClient.csrf(form), form_nonce: FormClient.nonce(form, '/dashboard/links')!,
    amount: '5000', currency: 'XAF', description: 'Robe\u0000 wax', expires: '', max_payments: '1',
  });
  t.equal(r.status, 400, `the merchant's error (got ${r.status})`);
  t.equal((await h.as(m, 'GET', '/payment-links')).body.data.length, 0, 'nothing created');
});

t.test('an expiry day that does not exist (30 February): 400, not a link expiring in March', async (t) => {
  const m = await h.newMerchant('Boutique Awa');
  const en = await signedInClient(h, m.merchantId, 'links-day@example.com');
  const form = await en.get('/dashboard/links');
  const r = await en.post('/dashboard/links', {
    csrf_token: FormClient.csrf(form), form_nonce: FormClient.nonce(form, '/dashboard/links')!,
    amount: '5000', currency: 'XAF', description: 'Robe wax', expires: `${new Date().getUTCFullYear() + 1}-02-30`, max_payments: '1',
  });
  t.equal(r.status, 400, `refused (got ${r.status})`);
  t.equal((await h.as(m, 'GET', '/payment-links')).body.data.length, 0, 'nothing created');
});
