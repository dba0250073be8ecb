// The home page's balance over time (issue 35): per currency, the available balance at each day's
// close over the last 30 days as an inline SVG line (no script, nothing fetched), with the figures
// in a table beside it for screen readers and for exact amounts; and the statement download form.
import { html, type Html } from '../../infra/html.ts';
import type { DailyClosing } from '../balance-history.ts';
import type { Speech } from '../language.ts';
import { BASE, money, rich } from './layout.ts';

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

function chart(v: Speech, currency: string, days: DailyClosing[]): Html {
  const first = days[0]!;
  const last = days[days.length - 1]!;
  const label = v.t('dash.chart.label', {
    currency, first: first.day, last: last.day, from: money(v, first.available, currency), to: money(v, last.available, currency),
  });
  return html`<figure class="balance-chart" data-currency="${currency}">
<figcaption><strong>${currency}</strong> <span class="muted">${v.t('dash.chart.caption', { days: days.length })}</span></figcaption>
<svg viewBox="0 0 ${W} ${H}" width="100%" height="${H}" role="img" aria-label="${label}">
  <line x1="${PAD}" y1="${H - PAD}" x2="${W - PAD}" y2="${H - PAD}" stroke="#c9ced6" stroke-width="1"/>
  <polyline points="${points(days)}" fill="none" stroke="#2563eb" stroke-width="2" stroke-linejoin="round"/>
</svg>
<details><summary>${v.t('dash.chart.table')}</summary>
<table><thead><tr><th scope="col">${v.t('dash.chart.day')}</th><th scope="col">${v.t('dash.chart.available')}</th><th scope="col">${v.t('dash.chart.reserved')}</th></tr></thead>
<tbody>${[...days].reverse().map((d) => html`<tr><td>${d.day}</td><td>${money(v, d.available, currency)}</td><td>${money(v, d.reserved, currency)}</td></tr>`)}</tbody></table>
</details>
</figure>`;
}

/** The statement form: a currency, whole UTC days (from the first day's start to the last day's end), CSV or JSON. */
function statementForm(v: Speech, from: string, to: string): Html {
  return html`<form method="get" action="${BASE}/statement" class="statement-form">
<label>${v.t('dash.statement.currency')} <select name="currency"><option>XAF</option><option>XOF</option></select></label>
<label>${v.t('dash.statement.from')} <input type="date" name="from" value="${from}" required></label>
<label>${v.t('dash.statement.to')} <input type="date" name="to" value="${to}" required></label>
<label>${v.t('dash.statement.format')} <select name="format"><option value="csv">CSV</option><option value="json">JSON</option></select></label>
<button type="submit">${v.t('dash.statement.download')}</button>
</form>`;
}

/** `statements`: whether the reader's role may download statements (the form is left out otherwise). */
export function balanceHistory(v: Speech, charts: Array<{ currency: string; days: DailyClosing[] }>, statements = true): Html {
  const days = charts[0]?.days ?? [];
  return html`<section aria-labelledby="history-h">
<h2 id="history-h">${v.t('dash.chart.title')}</h2>
${charts.map((c) => chart(v, c.currency, c.days))}
${statements ? html`<h3>${v.t('dash.statement.title')}</h3>
<p class="muted">${rich(v, 'dash.statement.intro', { call: html`<code>GET /statements</code>` })}</p>
${statementForm(v, days[0]?.day ?? '', days[days.length - 1]?.day ?? '')}` : ''}
</section>`;
}
