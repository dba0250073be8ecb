// Wallet statements (issue 10, point 3): per merchant, currency and period, every wallet movement
// with opening and closing balances that reconcile (opening + Σ movements = closing), as JSON and
// CSV, from the operator API and the CLI.
import t, { type Test } from 'tap';
import { startTestApp, request } from './helpers/app.ts';
import { businessDay, cli } from './helpers/finance.ts';
import { wallet } from './helpers/money.ts';
import { statementCsv, STATEMENT_CSV_COLUMNS, type Statement, type StatementLine } from '../projections/statements.ts';

const h = await startTestApp({ env: { SANDBOX_SETTLE_MS: '30' } });
t.teardown(() => h.stop());
const s = h.app.services;
const biz = await businessDay(h, 'Statements');
const { m } = biz;

const statement = async (currency: string, q: Record<string, string> = {}) => {
  const qs = new URLSearchParams({ currency, ...q }).toString();
  return h.admin('GET', `/admin/merchants/${m.merchantId}/statements?${qs}`);
};

/** Checks a statement's arithmetic: each line's balances follow from the previous, the totals and closing from the lines. */
function reconciles(t: Test, st: Statement): void {
  let available = BigInt(st.opening.available);
  let reserved = BigInt(st.opening.reserved);
  let fees = 0n;
  for (const l of st.lines) {
    available += BigInt(l.available_delta);
    reserved += BigInt(l.reserved_delta);
    fees += BigInt(l.fee);
    if (String(available) !== l.available_balance || String(reserved) !== l.reserved_balance) t.fail(`line ${l.position} does not follow`);
    if (available < 0n || reserved < 0n) t.fail(`line ${l.position} below zero`);
  }
  t.same(st.closing, { available: String(available), reserved: String(reserved) }, 'opening + Σ movements = closing');
  t.equal(st.totals.available_delta, String(available - BigInt(st.opening.available)));
  t.equal(st.totals.reserved_delta, String(reserved - BigInt(st.opening.reserved)));
  t.equal(st.totals.fees, String(fees));
  t.equal(st.totals.movements, st.lines.length);
  t.equal(st.reconciled, true);
}

t.test('the whole history: from zero to the wallet\'s balance, one line per wallet event, balances as the events state them', async (t) => {
  for (const currency of ['XOF', 'XAF']) {
    const r = await statement(currency);
    t.equal(r.status, 200);
    const st = r.body as Statement;
    t.match(st, { merchant_id: m.merchantId, currency, from: '1970-01-01T00:00:00.000Z' });
    t.same(st.opening, { available: '0', reserved: '0' });
    reconciles(t, st);
    const w = await wallet(h, m, currency);
    t.same(st.closing, { available: w.available, reserved: w.reserved }, `${currency}: closing = GET /wallets`);
    // One line per wallet event, in order, each with the balances the event states after it.
    const events = await s.store.readStream(`wallet-${m.merchantId}-${currency}`);
    t.same(st.lines.map((l) => l.event_id), events.map((e) => e.id));
    st.lines.forEach((l: StatementLine, i: number) => {
      const b = (events[i]!.data as { balances: { available: string; reserved: string } }).balances;
      if (l.available_balance !== b.available || l.reserved_balance !== b.reserved) t.fail(`line ${i}: ${JSON.stringify(l)} vs ${JSON.stringify(b)}`);
    });
  }
  const xof = (await statement('XOF')).body as Statement;
  t.same([...new Set(xof.lines.map((l) => l.movement))].sort(), ['credit', 'hold', 'post', 'release', 'top_up'], 'every kind of movement');
  t.match(xof.lines[0], { movement: 'top_up', available_delta: '100000', reserved_delta: '0', counterparty: 'platform:funding', description: 'Top-up (funding)' });
  const post = xof.lines.find((l) => l.movement === 'post' && l.reference_id === biz.payouts.completed)!;
  t.match(post, { reserved_delta: '-10000', available_delta: '0', fee: '100', counterparty: 'provider:SN_WAVE_MOMO', description: `Paid out: payout ${biz.payouts.completed} (fee 100)` });
  const hold = xof.lines.find((l) => l.movement === 'hold' && l.reference_id === biz.payouts.completed)!;
  t.match(hold, { available_delta: '-10000', reserved_delta: '10000', counterparty: `merchant:${m.merchantId}:reserved` });
  const credit = xof.lines.find((l) => l.movement === 'credit')!;
  t.match(credit, { reference_type: 'payin', reference_id: biz.payins.xof, available_delta: '6895', fee: '105' });
});

t.test('periods: consecutive statements chain (one\'s closing is the next\'s opening) and split the lines', async (t) => {
  const full = (await statement('XOF')).body as Statement;
  t.ok(full.lines.length >= 8);
  // Cut between two movements with different times.
  const cut = full.lines.findIndex((l, i) => i > 2 && l.at > full.lines[i - 1]!.at);
  t.ok(cut > 0, 'movements at different times');
  const at = full.lines[cut]!.at;
  const first = (await statement('XOF', { to: at })).body as Statement;
  const second = (await statement('XOF', { from: at })).body as Statement;
  reconciles(t, first);
  reconciles(t, second);
  t.same(first.closing, second.opening, 'the first period\'s closing is the second\'s opening');
  t.same([...first.lines, ...second.lines].map((l) => l.event_id), full.lines.map((l) => l.event_id), 'every movement in exactly one period');
  t.same(second.closing, full.closing);
  t.equal(first.to, at);
  t.equal(second.from, at);

  const future = (await statement('XOF', { from: '2999-01-01T00:00:00Z', to: '2999-02-01T00:00:00Z' })).body as Statement;
  t.same(future.lines, []);
  t.same(future.opening, full.closing, 'an empty period opens and closes at the balance');
  t.same(future.closing, full.closing);
  const before = (await statement('XOF', { to: '2000-01-01T00:00:00Z' })).body as Statement;
  t.same([before.opening, before.closing, before.lines], [{ available: '0', reserved: '0' }, { available: '0', reserved: '0' }, []]);
});

t.test('CSV: a header, an opening line, one line per movement, a closing line; it adds up', async (t) => {
  const r = await statement('XOF', { format: 'csv' });
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^text\/csv; charset=utf-8/);
  t.match(r.headers.get('content-disposition'), new RegExp(`^attachment; filename="statement-${m.merchantId}-XOF-1970-01-01-\\d{4}-\\d{2}-\\d{2}\\.csv"$`));
  t.ok(r.text.endsWith('\r\n'));
  const rows = r.text.trimEnd().split('\r\n').map((line) => line.split(','));
  t.same(rows[0], [...STATEMENT_CSV_COLUMNS]);
  const col = (row: string[], name: typeof STATEMENT_CSV_COLUMNS[number]) => row[STATEMENT_CSV_COLUMNS.indexOf(name)]!;
  const json = (await statement('XOF')).body as Statement;
  t.equal(rows.length, json.lines.length + 3, 'header + opening + movements + closing');
  t.equal(col(rows[1]!, 'line_type'), 'opening');
  t.equal(col(rows[rows.length - 1]!, 'line_type'), 'closing');
  let available = BigInt(col(rows[1]!, 'available_balance'));
  let reserved = BigInt(col(rows[1]!, 'reserved_balance'));
  let sumA = 0n;
  let sumR = 0n;
  for (const row of rows.slice(2, -1)) {
    t.equal(col(row, 'line_type'), 'movement');
    sumA += BigInt(col(row, 'available_delta'));
    sumR += BigInt(col(row, 'reserved_delta'));
    available += BigInt(col(row, 'available_delta'));
    reserved += BigInt(col(row, 'reserved_delta'));
    if (BigInt(col(row, 'available_balance')) !== available || BigInt(col(row, 'reserved_balance')) !== reserved) t.fail(`row ${row.join(',')}`);
  }
  const closing = rows[rows.length - 1]!;
  t.same([col(closing, 'available_balance'), col(closing, 'reserved_balance')], [String(available), String(reserved)], 'opening + Σ = closing in the CSV');
  t.same([col(closing, 'available_delta'), col(closing, 'reserved_delta')], [String(sumA), String(sumR)]);
  t.same([col(closing, 'available_balance'), col(closing, 'reserved_balance')], [json.closing.available, json.closing.reserved]);
});

t.test('CSV quoting: commas, quotes and formula-like text are safe; numbers are left alone', async (t) => {
  const line: StatementLine = {
    position: '7', event_id: 'e', at: '2025-01-01T00:00:00.000Z', movement: 'credit', movement_id: 'x', reference_type: 'payin',
    reference_id: '=HYPERLINK("http://evil")', description: 'Collected: a, "b"', available_delta: '-5', reserved_delta: '5', fee: '0',
    counterparty: '@SUM(A1)', available_balance: '0', reserved_balance: '5',
  };
  const st: Statement = {
    merchant_id: 'm', currency: 'XOF', from: '2025-01-01T00:00:00.000Z', to: '2025-01-02T00:00:00.000Z',
    opening: { available: '5', reserved: '0' }, closing: { available: '0', reserved: '5' },
    totals: { movements: 1, available_delta: '-5', reserved_delta: '5', fees: '0' }, reconciled: true, settled: true, lines: [line],
  };
  const csv = statementCsv(st).split('\r\n');
  t.equal(csv[2], 'movement,2025-01-01T00:00:00.000Z,7,e,credit,x,payin,"\'=HYPERLINK(""http://evil"")","Collected: a, ""b""",\'@SUM(A1),-5,5,0,0,5');
});

t.test('validation: currency required, period in order, unknown merchant, operator token', async (t) => {
  t.equal((await h.admin('GET', `/admin/merchants/${m.merchantId}/statements`)).status, 400, 'no currency');
  t.equal((await statement('EUR')).status, 400, 'unknown currency');
  const r = await statement('XOF', { from: '2025-02-01T00:00:00Z', to: '2025-01-01T00:00:00Z' });
  t.equal(r.status, 400);
  t.equal(r.body.error.code, 'bad_request');
  t.equal((await statement('XOF', { from: 'yesterday' })).status, 400, 'not a date-time');
  t.equal((await statement('XOF', { format: 'xml' })).status, 400);
  t.equal((await h.admin('GET', '/admin/merchants/00000000-0000-4000-8000-000000000000/statements?currency=XOF')).status, 404);
  t.equal((await request(h.url, 'GET', `/admin/merchants/${m.merchantId}/statements?currency=XOF`)).status, 401);
  t.equal((await h.as(m, 'GET', `/admin/merchants/${m.merchantId}/statements?currency=XOF`)).status, 401, 'not with merchant credentials');
});

t.test('CLI: npm run statement gives the API\'s statement', { timeout: 120_000 }, async (t) => {
  const env = { DATABASE_URL: s.config.databaseUrl!, DATA_DIR: h.config.dataDir };
  const to = new Date().toISOString();
  const csv = await cli('statement', ['--merchant', m.merchantId, '--currency', 'XOF', '--to', to], env);
  t.equal(csv.code, 0, csv.stderr);
  const api = await statement('XOF', { to, format: 'csv' });
  t.equal(csv.stdout, api.text, 'the same CSV as the API');
  t.match(csv.stderr, /movements; opening available 0 reserved 0; closing available \d+ reserved \d+; reconciled/);
  const json = await cli('statement', ['--merchant', m.merchantId, '--currency', 'XOF', '--to', to, '--format', 'json'], env);
  t.equal(json.code, 0);
  t.same(JSON.parse(json.stdout), (await statement('XOF', { to })).body);
  const usage = await cli('statement', ['--merchant', m.merchantId], env);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /--currency must be XAF or XOF/);
  const unknown = await cli('statement', ['--merchant', '00000000-0000-4000-8000-000000000000', '--currency', 'XOF'], env);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /no merchant/);
});
