// Statements for merchants (CONTRACT.md §13, issue 35 point 1): GET /statements is the operator's
// statement of the merchant's own wallet (JSON and CSV); consecutive statements chain (closing of
// [a, b) = opening of [b, c)) and the balances as of b are that opening, with payins settling and
// payouts held, paid and released while the statements and balances are asked around each boundary.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { recipientSN } from './helpers/finance.ts';
import { leg, newCustomer, party, quote, settled, sleep, topUp } from './helpers/money.ts';
import type { Statement } from '../projections/statements.ts';
import * as W from '../domain/wallet.ts';
import { streams } from '../commands/streams.ts';
import { toNew } from '../commands/aggregates.ts';

const h = await startTestApp({ env: { SANDBOX_SETTLE_MS: '20' } });
t.teardown(() => h.stop());
const s = h.app.services;
const m = await h.newMerchant('StatementRaces');
await topUp(h, m, 'XOF', '500000');
const customer = await newCustomer(h, m);
const start = new Date().toISOString();

const statement = async (q: Record<string, string>): Promise<Statement> => {
  const r = await h.as(m, 'GET', `/statements?${new URLSearchParams({ currency: 'XOF', ...q }).toString()}`);
  if (r.status !== 200) throw new Error(`statement: ${r.status} ${r.text}`);
  return r.body as Statement;
};
const asOf = async (at: string) => {
  const r = await h.as(m, 'GET', `/wallets?as_of=${encodeURIComponent(at)}`);
  const w = r.body.data.find((x: { currency: string }) => x.currency === 'XOF');
  return { available: w.available as string, reserved: w.reserved as string };
};

/** A payin of `amount` XOF (completes), created and waited for. */
async function payin(amount: string, phone: string): Promise<void> {
  const q = await quote(h, m, 'payin', { customer_id: customer, ...leg('SN_WAVE_MOMO', 'SN', 'XOF', amount) });
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('SN', 'SN_WAVE_MOMO', phone) }, { idem: true });
  if (p.status !== 201) throw new Error(`payin: ${p.status} ${p.text}`);
  await settled(h, m, 'payins', p.body.id);
}

/** A payout of `amount` XOF: held at create, then paid (or released: a phone ending 99 fails), waited for. */
async function payout(amount: string, phone: string): Promise<void> {
  const q = await quote(h, m, 'payout', { customer_id: customer, ...leg('SN_WAVE_MOMO', 'SN', 'XOF', amount) });
  const p = await h.as(m, 'POST', '/payouts', { quote_id: q.id, customer_id: customer, payment_reason_text: 'Race', recipient: recipientSN(phone) }, { idem: true });
  if (p.status !== 201) throw new Error(`payout: ${p.status} ${p.text}`);
  await settled(h, m, 'payouts', p.body.id);
}

interface Asked { at: string; asOf: { available: string; reserved: string }; before: Statement; after: Statement }

t.test('statements chain and the balances as of each boundary are its opening, with movements racing the boundaries', async (t) => {
  let running = true;
  const work = (async () => {
    const jobs: Array<Promise<void>> = [];
    for (let i = 0; i < 12; i++) {
      jobs.push(payin(String(1000 + i * 100), `+22177000${String(1000 + i).slice(-4)}`));
      jobs.push(payout(String(2000 + i * 50), i % 3 === 0 ? '+221770000099' : `+22177100${String(1000 + i).slice(-4)}`));
      await sleep(15);
    }
    await Promise.all(jobs);
    running = false;
  })();
  // Boundaries taken while the payments are created and settle: each asked at once, as a merchant would.
  const asked: Asked[] = [];
  while (running) {
    const at = new Date().toISOString();
    const [w, before, after] = await Promise.all([asOf(at), statement({ from: start, to: at }), statement({ from: at })]);
    asked.push({ at, asOf: w, before, after });
    await sleep(20);
  }
  await work;
  await s.awaitReadModels(await s.store.head());
  t.ok(asked.length >= 3, `${asked.length} boundaries asked during the race`);
  for (const a of asked) t.ok(a.before.reconciled && a.after.reconciled, `asked at ${a.at}: each statement reconciles`);
  // A period ending now is settled only once the wallet moved after its end; such a statement never changes.
  const settledEarly = asked.filter((a) => a.before.settled);
  for (const a of settledEarly) {
    t.same(await statement({ from: start, to: a.at }), a.before, `settled when asked at ${a.at}: the same statement once everything settled`);
  }
  t.comment(`${settledEarly.length} of ${asked.length} boundaries were settled when asked (the wallet had moved after them)`);

  // Once everything settled: at each boundary, as of = closing before = opening after; consecutive periods chain.
  const bounds = [start, ...asked.map((a) => a.at), new Date().toISOString()];
  let lines = 0;
  for (let i = 1; i < bounds.length; i++) {
    const period = await statement({ from: bounds[i - 1]!, to: bounds[i]! });
    t.equal(period.reconciled, true);
    lines += period.lines.length;
    const next = i + 1 < bounds.length ? await statement({ from: bounds[i]!, to: bounds[i + 1]! }) : undefined;
    const at = await asOf(bounds[i]!);
    if (next) t.same(period.closing, next.opening, `closing of the period to ${bounds[i]} = opening of the next`);
    t.same(at, period.closing, `as of ${bounds[i]} = the closing of the period before`);
  }
  const whole = await statement({ from: start, to: bounds.at(-1)! });
  t.equal(lines, whole.lines.length, 'the periods together hold every movement once');
  t.ok(whole.lines.length >= 12 + 12 * 2, `${whole.lines.length} movements: credits, holds, posts and releases`);
  t.same(new Set(whole.lines.map((l) => l.movement)), new Set(['credit', 'hold', 'post', 'release']));
  const wallets = (await h.as(m, 'GET', '/wallets')).body.data.find((x: { currency: string }) => x.currency === 'XOF');
  t.same(whole.closing, { available: wallets.available, reserved: wallets.reserved }, 'the last closing is the wallet now');
});

t.test('CSV and JSON: the same statement; a settled period; only the merchant\'s own wallet', async (t) => {
  const to = new Date().toISOString();
  const json = await statement({ from: start, to });
  const csv = await h.as(m, 'GET', `/statements?currency=XOF&from=${encodeURIComponent(start)}&to=${encodeURIComponent(to)}&format=csv`);
  t.equal(csv.status, 200);
  t.match(csv.headers.get('content-type'), /^text\/csv/);
  t.match(csv.headers.get('content-disposition'), new RegExp(`attachment; filename="statement-${m.merchantId}-XOF-`));
  const rows = csv.text.trim().split('\r\n').map((r) => r.split(','));
  const header = rows[0]!;
  const col = (row: string[], name: string) => row[header.indexOf(name)]!;
  t.equal(rows.length, json.lines.length + 3, 'header, opening, one line a movement, closing');
  t.same(rows.slice(2, -1).map((r) => col(r, 'event_id')), json.lines.map((l) => l.event_id), 'the same movements in the same order');
  const closing = rows.at(-1)!;
  t.same([col(closing, 'available_balance'), col(closing, 'reserved_balance')], [json.closing.available, json.closing.reserved]);
  const admin = await h.admin('GET', `/admin/merchants/${m.merchantId}/statements?currency=XOF&from=${encodeURIComponent(start)}&to=${encodeURIComponent(to)}`);
  t.same({ ...admin.body, settled: undefined }, { ...json, settled: undefined }, 'the operator\'s statement of that wallet');

  const old = await statement({ from: '2020-01-01T00:00:00Z', to: new Date(Date.now() - 120_000).toISOString() });
  t.equal(old.settled, true, 'a period that ended two minutes ago is settled');

  const other = await h.newMerchant('StatementOther');
  await topUp(h, other, 'XOF', '1000');
  const theirs = await h.as(other, 'GET', `/statements?currency=XOF&from=${encodeURIComponent(start)}`);
  t.equal(theirs.body.merchant_id, other.merchantId);
  t.equal(theirs.body.lines.length, 1, 'its own top-up only');
  const mine = new Set(json.lines.map((l) => l.event_id));
  t.notOk(theirs.body.lines.some((l: { event_id: string }) => mine.has(l.event_id)), 'none of the first merchant\'s movements');
});

t.test('a movement committed late with an earlier time: why a period ending now is not settled', async (t) => {
  const late = await h.newMerchant('StatementLate');
  await topUp(h, late, 'XOF', '1000');
  await sleep(20);
  const to = new Date().toISOString();
  const ask = async () => {
    const r = await h.as(late, 'GET', `/statements?currency=XOF&to=${encodeURIComponent(to)}`);
    return r.body as Statement;
  };
  const first = await ask();
  t.match(first, { closing: { available: '1000' }, settled: false });
  // A top-up decided just before `to` whose append commits only now (as a slow attempt would).
  const stream = streams.wallet(late.merchantId, 'XOF');
  const past = await s.store.readStream(stream);
  const state = past.reduce((st, e) => W.walletDecider.evolve(st, e as unknown as W.WalletEvent), W.walletDecider.initialState());
  const decided = W.topUp(state, { merchantId: late.merchantId, currency: 'XOF', at: new Date(Date.parse(to) - 5).toISOString(), entryId: 'late-entry', amount: 500n });
  await s.store.append([{ streamId: stream, expectedVersion: past.length, events: toNew(decided, { requestId: 'late' }) }]);
  const again = await ask();
  t.match(again, { closing: { available: '1500' }, reconciled: true, settled: false }, 'the unsettled period gained it');
  t.same(await asOfFor(late, to), again.closing, 'and the balances as of its end moved with it: the same source, the same rule');
  // Once the wallet has moved at or after `to`, nothing can come before `to` any more: settled at once.
  await topUp(h, late, 'XOF', '250');
  await topUp(h, late, 'XAF', '250'); // the balances as of a time are settled when every wallet is
  const settled = await ask();
  t.match(settled, { closing: { available: '1500' }, reconciled: true, settled: true }, 'settled once the wallet moved after the period');
  t.equal((await h.as(late, 'GET', `/wallets?as_of=${encodeURIComponent(to)}`)).body.settled, true, 'and so is the balance as of its end');
  // A decision dated before `to` now is dated after the wallet's last movement (the ledger keeps time order).
  const now = await s.store.readStream(stream);
  const folded = now.reduce((st, e) => W.walletDecider.evolve(st, e as unknown as W.WalletEvent), W.walletDecider.initialState());
  const tooLate = W.topUp(folded, { merchantId: late.merchantId, currency: 'XOF', at: new Date(Date.parse(to) - 5).toISOString(), entryId: 'later-entry', amount: 700n });
  t.ok(tooLate[0]!.data.at >= to, 'a movement decided with an earlier time takes the wallet\'s last time');
  await s.store.append([{ streamId: stream, expectedVersion: now.length, events: toNew(tooLate, { requestId: 'later' }) }]);
  t.same(await ask(), settled, 'the settled statement never changes');
});

t.test('read models that cannot reach the latest commit: 503, never an answer from a lagging table', async (t) => {
  const lag = await h.newMerchant('StatementLag');
  await topUp(h, lag, 'XOF', '1000');
  const waitFor = s.projector.waitFor.bind(s.projector);
  s.projector.waitFor = async () => false; // as a projector stalled on a failing batch answers after its wait
  t.teardown(() => { s.projector.waitFor = waitFor; });
  const statement = await h.as(lag, 'GET', '/statements?currency=XOF');
  t.equal(statement.status, 503);
  t.equal(statement.body.error.code, 'service_unavailable');
  const asOf = await h.as(lag, 'GET', `/wallets?as_of=${encodeURIComponent(new Date().toISOString())}`);
  t.equal(asOf.status, 503, 'the balances as of a time too');
  s.projector.waitFor = waitFor;
  t.equal((await h.as(lag, 'GET', '/statements?currency=XOF')).status, 200, 'answered once they catch up');
});

async function asOfFor(who: typeof m, at: string) {
  const w = (await h.as(who, 'GET', `/wallets?as_of=${encodeURIComponent(at)}`)).body.data.find((x: { currency: string }) => x.currency === 'XOF');
  return { available: w.available as string, reserved: w.reserved as string };
}
