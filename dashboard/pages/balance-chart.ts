// The home page's balance over time (issue 35): per currency, the available balance at each day's
// close over the last 30 days as an inline SVG line (no script, nothing fetched), with the figures
// in a table beside it for screen readers and for exact amounts; and the statement download form.
import { html, type Html } from '../html.ts';
import type { DailyClosing } from '../balance-history.ts';
import { BASE, money } from './layout.ts';

const W = 600;
const H = 140;
const PAD = 6;

/** The y of each balance (drawing only: amounts stay strings everywhere else). */
function points(days: DailyClosing[]): string {
  const values = days.map((d) => BigInt(d.available));
  const max = values.reduce((a, b) => (b > a ? b : a), 0n);
  const step = days.length > 1 ? (W - 2 * PAD) / (days.length - 1) : 0;
  return values.map((v, i) => {
    const y = max === 0n ? H - PAD : H - PAD - Number((v * BigInt(H - 2 * PAD) * 1000n) / max) / 1000;
    return `${(PAD + i * step).toFixed(1)},${y.toFixed(1)}`;
  }).join(' ');
}

function chart(currency: string, days: DailyClosing[]): Html {
  const first = days[0]!;
  const last = days[days.length - 1]!;
  const label = `${currency} available balance at each day's close, ${first.day} to ${last.day}: from ${money(first.available, currency)} to ${money(last.available, currency)}`;
  return html`<figure class="balance-chart" data-currency="${currency}">
<figcaption><strong>${currency}</strong> <span class="muted">available at each day's close, last ${days.length} days</span></figcaption>
<svg viewBox="0 0 ${W} ${H}" width="100%" height="${H}" role="img" aria-label="${label}">
  <line x1="${PAD}" y1="${H - PAD}" x2="${W - PAD}" y2="${H - PAD}" stroke="#c9ced6" stroke-width="1"/>
  <polyline points="${points(days)}" fill="none" stroke="#2563eb" stroke-width="2" stroke-linejoin="round"/>
</svg>
<details><summary>Daily closing balances</summary>
<table><thead><tr><th scope="col">Day (UTC)</th><th scope="col">Available</th><th scope="col">Reserved</th></tr></thead>
<tbody>${[...days].reverse().map((d) => html`<tr><td>${d.day}</td><td>${money(d.available, currency)}</td><td>${money(d.reserved, currency)}</td></tr>`)}</tbody></table>
</details>
</figure>`;
}

/** The statement form: a currency, whole UTC days (from the first day's start to the last day's end), CSV or JSON. */
function statementForm(from: string, to: string): Html {
  return html`<form method="get" action="${BASE}/statement" class="statement-form">
<label>Currency <select name="currency"><option>XAF</option><option>XOF</option></select></label>
<label>From <input type="date" name="from" value="${from}" required></label>
<label>To (inclusive) <input type="date" name="to" value="${to}" required></label>
<label>Format <select name="format"><option value="csv">CSV</option><option value="json">JSON</option></select></label>
<button type="submit">Download statement</button>
</form>`;
}

export function balanceHistory(charts: Array<{ currency: string; days: DailyClosing[] }>): Html {
  const days = charts[0]?.days ?? [];
  return html`<section aria-labelledby="history-h">
<h2 id="history-h">Balance over time</h2>
${charts.map((c) => chart(c.currency, c.days))}
<h3>Statement</h3>
<p class="muted">Opening balance, every movement, closing balance: the same statement as <code>GET /statements</code>.</p>
${statementForm(days[0]?.day ?? '', days[days.length - 1]?.day ?? '')}
</section>`;
}
