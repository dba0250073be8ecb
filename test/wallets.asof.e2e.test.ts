// Balances as of any time and the wallet's transactions (CONTRACT.md §13, issue 35 point 1): the
// balances as of T are the fold of the wallet's movements before T (at < T), equal to the opening of
// a statement from T, and to GET /wallets now; the list pages newest first; bad input is a 400;
// another merchant's wallet never shows.
import t from 'tap';
import { request, startTestApp } from './helpers/app.ts';
import { businessDay } from './helpers/finance.ts';
import { recording, responseChecker, type Recorded } from './helpers/openapi-responses.ts';
import type { WalletTransaction } from '../projections/wallet-history.ts';

const app = await startTestApp({ env: { SANDBOX_SETTLE_MS: '30' } });
t.teardown(() => app.stop());
const recorded: Recorded[] = [];
const h = recording(app, recorded);
const biz = await businessDay(h, 'AsOf');
const { m } = biz;

/** Every movement of the wallet, newest first, through the cursor in pages of `limit`. */
async function allTransactions(currency: string, limit: number): Promise<WalletTransaction[]> {
  const out: WalletTransaction[] = [];
  let cursor: string | null = null;
  do {
    const qs: string = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}) }).toString();
    const r = await h.as(m, 'GET', `/wallets/${currency}/transactions?${qs}`);
    if (r.status !== 200) throw new Error(`transactions: ${r.status} ${r.text}`);
    out.push(...r.body.data);
    cursor = r.body.next_cursor;
    if (r.body.has_more !== (cursor !== null)) throw new Error('has_more and next_cursor disagree');
  } while (cursor);
  return out;
}

/** The fold of the movements before `at` (oldest first), from nothing. */
function foldBefore(txs: WalletTransaction[], at: number): { available: string; reserved: string } {
  let available = 0n;
  let reserved = 0n;
  for (const x of [...txs].reverse()) {
    if (Date.parse(x.at) >= at) break;
    available += BigInt(x.available_delta);
    reserved += BigInt(x.reserved_delta);
  }
  return { available: available.toString(), reserved: reserved.toString() };
}

const asOf = async (iso: string) => h.as(m, 'GET', `/wallets?as_of=${encodeURIComponent(iso)}`);

t.test('the transactions: newest first, every page through the cursor, each balance following from the one before', async (t) => {
  const all = await allTransactions('XOF', 3);
  const one = await allTransactions('XOF', 100);
  t.same(all, one, 'pages of 3 = one page of 100');
  t.ok(all.length >= 8, `a business day's movements (${all.length})`);
  t.same(new Set(all.map((x) => x.movement)), new Set(['top_up', 'hold', 'post', 'release', 'credit']), 'every kind of movement');
  let available = 0n;
  let reserved = 0n;
  for (const x of [...all].reverse()) {
    available += BigInt(x.available_delta);
    reserved += BigInt(x.reserved_delta);
    if (String(available) !== x.available_balance || String(reserved) !== x.reserved_balance) t.fail(`movement ${x.id} does not follow`);
  }
  for (let i = 1; i < all.length; i++) if (Date.parse(all[i]!.at) > Date.parse(all[i - 1]!.at)) t.fail('not newest first');
  const now = (await h.as(m, 'GET', '/wallets')).body.data.find((w: { currency: string }) => w.currency === 'XOF');
  t.same([now.available, now.reserved], [all[0]!.available_balance, all[0]!.reserved_balance], 'the newest movement\'s balances are GET /wallets');
  const ref = all.find((x) => x.movement === 'credit')!;
  t.match(ref.reference, { type: 'payin', id: biz.payins.xof }, 'a collection names its payin');
  t.ok(BigInt(ref.fee) > 0n, 'with the fee the platform took');
});

t.test('created_from / created_to filter on the movement time, inclusive', async (t) => {
  const all = await allTransactions('XOF', 100);
  const mid = all[Math.floor(all.length / 2)]!;
  const from = await h.as(m, 'GET', `/wallets/XOF/transactions?limit=100&created_from=${encodeURIComponent(mid.at)}`);
  t.same(from.body.data, all.filter((x) => Date.parse(x.at) >= Date.parse(mid.at)));
  const to = await h.as(m, 'GET', `/wallets/XOF/transactions?limit=100&created_to=${encodeURIComponent(mid.at)}`);
  t.same(to.body.data, all.filter((x) => Date.parse(x.at) <= Date.parse(mid.at)));
});

t.test('as of several instants: the fold of the movements before it, the opening of a statement from it', async (t) => {
  for (const currency of ['XOF', 'XAF']) {
    const all = await allTransactions(currency, 100);
    const times = [...new Set(all.map((x) => Date.parse(x.at)))].sort((a, b) => a - b);
    const instants = [times[0]! - 1, ...times, ...times.slice(1).map((x, i) => Math.floor((x + times[i]!) / 2)), times.at(-1)! + 1];
    for (const at of instants) {
      const iso = new Date(at).toISOString();
      const r = await asOf(iso);
      t.equal(r.status, 200);
      const w = r.body.data.find((x: { currency: string }) => x.currency === currency);
      const want = foldBefore(all, at);
      if (w.available !== want.available || w.reserved !== want.reserved) t.fail(`${currency} as of ${iso}: ${JSON.stringify(w)} ≠ fold ${JSON.stringify(want)}`);
      const st = await h.as(m, 'GET', `/statements?currency=${currency}&from=${encodeURIComponent(iso)}`);
      if (st.body.opening.available !== want.available || st.body.opening.reserved !== want.reserved) t.fail(`statement from ${iso} opens elsewhere`);
    }
    t.pass(`${currency}: ${instants.length} instants, each the fold of the movements before it`);
    // The boundary: a movement at exactly T is not yet in the balances as of T.
    const newest = all[0]!;
    const at = (await asOf(newest.at)).body.data.find((x: { currency: string }) => x.currency === currency);
    t.same({ available: at.available, reserved: at.reserved }, foldBefore(all, Date.parse(newest.at)), 'at < T: a movement at T counts after it');
  }
});

t.test('answers: as_of and settled; the time of the last movement as updated_at; no wallets before the account', async (t) => {
  const old = await asOf('2020-01-01T00:00:00Z');
  t.equal(old.status, 200);
  t.same(old.body, { data: [], as_of: '2020-01-01T00:00:00.000Z', settled: true }, 'before the account was opened');
  const newest = (await allTransactions('XAF', 1))[0]!;
  const later = new Date(Date.parse(newest.at) + 1).toISOString();
  const r = await asOf(later);
  t.match(r.body, { as_of: later, settled: false });
  t.equal(r.body.data.find((x: { currency: string }) => x.currency === 'XAF').updated_at, newest.at);
});

t.test('bad input: 400 naming the parameter', async (t) => {
  for (const [path, field] of [
    ['/wallets?as_of=yesterday', 'as_of'],
    ['/wallets?as_of=2026-13-01T00:00:00Z', 'as_of'],
    [`/wallets?as_of=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`, 'query.as_of'],
    ['/wallets/EUR/transactions', 'currency'],
    ['/wallets/XOF/transactions?cursor=bm9wZQ', 'query.cursor'],
    ['/wallets/XOF/transactions?limit=0', 'limit'],
    ['/wallets/XOF/transactions?created_from=soon', 'created_from'],
    ['/statements?currency=XOF&from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'query.from'],
    ['/statements?currency=EUR', 'currency'],
    ['/statements', 'currency'],
    ['/statements?currency=XOF&to=tomorrow', 'to'],
    ['/statements?currency=XOF&format=xml', 'format'],
  ] as const) {
    const r = await h.as(m, 'GET', path);
    t.equal(r.status, 400, path);
    t.equal(r.body.error.code, 'bad_request', path);
    t.ok(JSON.stringify(r.body.error.details ?? []).includes(field), `${path}: names ${field}`);
  }
});

t.test('isolation: another merchant sees its own empty wallets, never this one\'s movements', async (t) => {
  const other = await h.newMerchant('AsOfOther');
  const list = await h.as(other, 'GET', '/wallets/XOF/transactions?limit=100');
  t.same(list.body, { data: [], has_more: false, next_cursor: null }, 'a wallet nothing has moved: an empty list');
  const at = await h.as(other, 'GET', `/wallets?as_of=${encodeURIComponent(new Date().toISOString())}`);
  t.same(at.body.data.map((w: { available: string; reserved: string }) => [w.available, w.reserved]), [['0', '0'], ['0', '0']]);
  const st = await h.as(other, 'GET', '/statements?currency=XOF');
  t.match(st.body, { merchant_id: other.merchantId, opening: { available: '0' }, closing: { available: '0', reserved: '0' }, lines: [] });
  const cursor = (await h.as(m, 'GET', '/wallets/XOF/transactions?limit=1')).body.next_cursor;
  const next = await h.as(other, 'GET', `/wallets/XOF/transactions?cursor=${cursor}`);
  t.same(next.body.data, [], 'a cursor of another merchant\'s list shows nothing of it');
});

t.test('every answer of these operations matches the schema the OpenAPI document declares for it', async (t) => {
  const check = responseChecker((await request(h.url, 'GET', '/openapi.json')).body);
  const mine = new Set(['listWallets', 'listWalletTransactions', 'getStatement']);
  let checked = 0;
  for (const r of recorded) {
    const { operationId, problems } = check(r);
    if (!operationId || !mine.has(operationId)) continue;
    checked++;
    if (problems.length) t.fail(problems.join('\n'));
  }
  t.ok(checked > 50, `${checked} answers checked`);
});
