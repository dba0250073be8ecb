// Dates the database cannot store, and days that do not exist, in filters: a 400 naming the field
// (the dashboard: its page with the dates message), never a 500. A black-box run found year 0000 in
// every list's created_from/created_to, the audit log's and the reconciliation's from/to, and
// 2024-02-30 in the dashboard's lists, each a 500 from PostgreSQL ("date/time field value out of
// range"); and a NUL byte in the dashboard's search ("invalid byte sequence").
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { signedInClient } from './helpers/dashboard.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const m = await h.newMerchant('Dates');

const YEAR_ZERO = ['0000-01-01', '0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '+010000-01-01T00:00:00Z'];

t.test('merchant lists: created_from and created_to the database cannot store are a 400 naming them', async (t) => {
  const lists = ['/customers', '/quotes', '/payins', '/payouts', '/refunds', '/transfers', '/payment-links', '/events', '/wallets/XAF/transactions'];
  for (const path of lists) {
    for (const name of ['created_from', 'created_to']) {
      for (const value of YEAR_ZERO) {
        const r = await h.as(m, 'GET', `${path}?${name}=${encodeURIComponent(value)}`);
        t.equal(r.status, 400, `${path} ${name}=${value}: ${r.status}`);
        t.equal(r.body.error?.code, 'bad_request');
        t.ok(r.body.error?.details?.some((d: { field: string }) => d.field.endsWith(name)), `${path} names ${name}`);
      }
    }
    t.equal((await h.as(m, 'GET', `${path}?created_from=0001-01-02&created_to=9999-12-30`)).status, 200, `${path}: the widest storable days are answered`);
  }
});

t.test('operator reports: from and to the database cannot store are a 400', async (t) => {
  for (const path of ['/admin/audit-log', '/admin/reconciliation']) {
    for (const name of ['from', 'to']) {
      for (const value of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00Z']) {
        const r = await h.admin('GET', `${path}?${name}=${encodeURIComponent(value)}`);
        t.equal(r.status, 400, `${path} ${name}=${value}: ${r.status} ${r.text.slice(0, 120)}`);
      }
    }
  }
  t.equal((await h.admin('GET', '/admin/reconciliation?to=0001-01-03T00:00:00Z')).status, 200, 'a day after year 1 began: its default day before is storable');
});

t.test('dashboard lists: a day that does not exist or cannot be stored is refused on the page; a NUL in the search finds as no search', async (t) => {
  const c = await signedInClient(h, m.merchantId, 'dates@example.com');
  for (const path of ['/dashboard/payins', '/dashboard/payouts', '/dashboard/transfers', '/dashboard/audit-log']) {
    for (const q of ['from=2024-02-30', 'to=2024-02-30', 'from=0000-01-01', 'to=0000-01-01', 'from=2023-02-29']) {
      const page = await c.get(`${path}?${q}`);
      t.equal(page.status, 400, `${path}?${q}: ${page.status}`);
    }
    t.equal((await c.get(`${path}?from=2024-02-29&to=2024-03-01`)).status, 200, `${path}: a leap day is a day`);
  }
  for (const path of ['/dashboard/payins', '/dashboard/payouts', '/dashboard/transfers']) {
    t.equal((await c.get(`${path}?q=a%00b`)).status, 200, `${path}: a NUL in the search`);
  }
  t.equal((await c.get('/dashboard/statement?currency=XAF&from=2024-02-30&to=2024-03-01')).status, 400, 'a statement from a day that does not exist');
});
