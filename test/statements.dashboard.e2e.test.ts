// The dashboard home page's balance over time and statement download (issue 35 point 1): each
// currency's closing balances of the last 30 days, each the API's balance as of the next day's start;
// a statement for a chosen period as CSV or JSON, the merchant API's own, of the session's merchant only.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { signedInClient } from './helpers/dashboard.ts';
import { topUp } from './helpers/money.ts';
import { ManualClock } from '../infra/clock.ts';

const DAY = 86_400_000;
const now = new Date();
const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const clock = new ManualClock(new Date(today - 12 * DAY + 10 * 3_600_000));
const h = await startTestApp({ clock });
t.teardown(() => h.stop());

// Twelve days ago 10:00, seven days ago 10:00, and now: a history over several days.
const m = await h.newMerchant('Chart');
await topUp(h, m, 'XOF', '10000');
clock.advance(5 * DAY);
await topUp(h, m, 'XOF', '5000');
await topUp(h, m, 'XAF', '3000');
clock.set(now);
await topUp(h, m, 'XOF', '1000');
const user = await signedInClient(h, m.merchantId, 'chart@example.com');

/** The rows of a currency's daily closing table: [day, available, reserved] with the amounts' digits only. */
function rows(page: string, currency: string): string[][] {
  const figure = new RegExp(`<figure class="balance-chart" data-currency="${currency}">([\\s\\S]*?)</figure>`).exec(page);
  if (!figure) throw new Error(`no ${currency} chart`);
  return [...figure[1]!.matchAll(/<tr><td>([0-9-]+)<\/td><td>([^<]+)<\/td><td>([^<]+)<\/td><\/tr>/g)]
    .map((r) => [r[1]!, r[2]!.replace(/[^0-9]/g, ''), r[3]!.replace(/[^0-9]/g, '')]);
}

t.test('home: 30 daily closings per currency, each the balance as of the next day\'s start (today: now), drawn as a line', async (t) => {
  const page = await user.get('/dashboard');
  t.equal(page.status, 200);
  for (const currency of ['XAF', 'XOF']) {
    const table = rows(page.text, currency);
    t.equal(table.length, 30, `${currency}: 30 days`);
    t.equal(table[0]![0], dayOf(today), 'newest first, today at the top');
    t.equal(table[29]![0], dayOf(today - 29 * DAY));
    for (const [day, available, reserved] of table) {
      const start = Date.parse(`${day}T00:00:00Z`);
      // Today so far: the balances now (an as_of in the future is refused).
      const path = start === today ? '/wallets' : `/wallets?as_of=${encodeURIComponent(new Date(start + DAY).toISOString())}`;
      const api = (await h.as(m, 'GET', path)).body.data.find((w: { currency: string }) => w.currency === currency);
      if (available !== (api?.available ?? '0') || reserved !== (api?.reserved ?? '0')) t.fail(`${currency} ${day}: ${available}/${reserved} ≠ the API's ${JSON.stringify(api)}`);
    }
    const points = new RegExp(`data-currency="${currency}">[\\s\\S]*?<polyline points="([^"]+)"`).exec(page.text)![1]!.split(' ');
    t.equal(points.length, 30, `${currency}: a point a day`);
  }
  const xof = rows(page.text, 'XOF');
  t.same([xof[0]![1], xof[7]![1], xof[12]![1], xof[13]![1]], ['16000', '15000', '10000', '0'], 'the top-ups on the days they were made');
});

t.test('statement download: CSV and JSON, the API\'s statement of the chosen whole days', async (t) => {
  const from = dayOf(today - 12 * DAY);
  const to = dayOf(today - 1 * DAY);
  const csv = await user.get(`/dashboard/statement?currency=XOF&from=${from}&to=${to}&format=csv`);
  t.equal(csv.status, 200);
  t.match(csv.headers.get('content-type'), /^text\/csv/);
  t.match(csv.headers.get('content-disposition'), /^attachment; filename="statement-.+\.csv"$/);
  const lines = csv.text.trim().split('\r\n');
  t.equal(lines.length, 2 + 2 + 1, 'header, opening, the two top-ups of those days, closing (not today\'s)');
  const json = await user.get(`/dashboard/statement?currency=XOF&from=${from}&to=${to}&format=json`);
  t.match(json.headers.get('content-disposition'), /^attachment; filename="statement-XOF-.+\.json"$/);
  const body = JSON.parse(json.text);
  const api = await h.as(m, 'GET', `/statements?currency=XOF&from=${from}T00:00:00Z&to=${dayOf(today)}T00:00:00Z`);
  t.same(body, api.body, 'the merchant API\'s statement of [from, to + 1 day)');
  t.match(body, { opening: { available: '0' }, closing: { available: '15000' }, reconciled: true, settled: true });
});

t.test('statement download: bad input is a 400 page; another merchant\'s user downloads its own wallet only', async (t) => {
  for (const qs of ['currency=EUR&from=2026-01-01&to=2026-01-02', 'currency=XOF&from=yesterday&to=2026-01-02', 'currency=XOF&from=2026-01-01&to=2026-01-02&format=xml']) {
    t.equal((await user.get(`/dashboard/statement?${qs}`)).status, 400, qs);
  }
  const other = await h.newMerchant('ChartOther');
  const otherUser = await signedInClient(h, other.merchantId, 'other@example.com');
  const theirs = JSON.parse((await otherUser.get(`/dashboard/statement?currency=XOF&from=${dayOf(today - 12 * DAY)}&to=${dayOf(today)}&format=json`)).text);
  t.match(theirs, { merchant_id: other.merchantId, lines: [], closing: { available: '0' } });
  const signedOut = await fetch(`${h.url}/dashboard/statement?currency=XOF&from=2026-01-01&to=2026-01-02`, { redirect: 'manual' });
  t.not(signedOut.status, 200, 'signed out: no statement');
});
