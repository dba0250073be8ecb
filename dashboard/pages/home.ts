// Home: balances per currency and the getting-started checklist that takes a new merchant from
// first sign-in to a working API key and webhook with nothing else to read.
import { html, type Html } from '../../infra/html.ts';
import { allows } from '../../domain/dashboard-roles.ts';
import type { View } from '../http.ts';
import { BASE, money, page, rich, when } from './layout.ts';
import { operatorNotice, type OperatorStatus } from './operator-notice.ts';
import { balanceHistory } from './balance-chart.ts';
import type { DailyClosing } from '../balance-history.ts';

export interface HomeData {
  wallets: Array<{ currency: string; available: string; reserved: string; updated_at: string }>;
  progress: { activeKey: boolean; webhookUrl: string | null; deliveredTestEvent: boolean; firstPayment: boolean };
  /** The merchant's operators: those closed or delayed are announced first (CONTRACT §14). */
  operators: OperatorStatus[];
  /** Each currency's closing balances of the last 30 days (balance-history.ts). */
  history: Array<{ currency: string; days: DailyClosing[] }>;
  apiBase: string;
}

function step(v: View, done: boolean, title: string, body: Html): Html {
  return html`<li class="${done ? 'done' : 'todo'}">
  <span class="tick" aria-hidden="true">${done ? '✓' : '○'}</span>
  <div><strong>${title}</strong> <span class="sr-only">${v.t(done ? 'dash.home.done_sr' : 'dash.home.todo_sr')}</span>${done ? html` <span class="muted">${v.t('dash.home.done')}</span>` : ''}
  <div class="step-body">${body}</div></div>
</li>`;
}

function balances(v: View, wallets: HomeData['wallets']): Html {
  return html`<section aria-labelledby="balances-h">
<h2 id="balances-h">${v.t('dash.home.balances')}</h2>
<div class="cards">
${wallets.map((w) => html`<div class="card" data-currency="${w.currency}">
  <h3>${w.currency}</h3>
  <p class="big">${money(v, w.available, w.currency)}</p>
  <p class="muted">${v.t('dash.home.available', { reserved: money(v, w.reserved, w.currency) })}</p>
  <p class="muted small">${rich(v, 'dash.home.updated', { when: when(v, w.updated_at) })}</p>
</div>`)}
</div>
</section>`;
}

function checklist(v: View, d: HomeData): Html {
  const p = d.progress;
  const code = (text: string) => html`<code>${text}</code>`;
  return html`<section aria-labelledby="start-h">
<h2 id="start-h">${v.t('dash.home.start')}</h2>
<ol class="checklist">
${step(v, true, v.t('dash.home.step_sign_in'), html`${v.t('dash.home.step_sign_in_body', { email: v.session.email })}`)}
${step(v, p.activeKey, v.t('dash.home.step_key'), rich(v, 'dash.home.step_key_body', {
    key_header: code('X-Api-Key'), secret_header: code('X-Api-Secret'), link: html`<a href="${BASE}/keys">${v.t('dash.home.step_key_link')}</a>`,
  }))}
${step(v, p.webhookUrl !== null, v.t('dash.home.step_webhook'), rich(v, 'dash.home.step_webhook_body', {
    post: code('POST'), link: html`<a href="${BASE}/webhooks">${v.t('dash.home.step_webhook_link')}</a>`,
    signature: code('X-Service-Signature'), signed: code('<X-Service-Timestamp>.<raw body>'),
  }))}
${step(v, p.deliveredTestEvent, v.t('dash.home.step_test'), rich(v, 'dash.home.step_test_body', {
    webhooks: html`<a href="${BASE}/webhooks">${v.t('dash.home.step_test_webhooks')}</a>`, button: html`<em>${v.t('dash.webhooks.test_button')}</em>`,
    ok: code('2xx'), log: html`<a href="${BASE}/events">${v.t('dash.home.step_test_log')}</a>`,
  }))}
${step(v, p.firstPayment, v.t('dash.home.step_call'), html`${v.t('dash.home.step_call_intro')}
<pre class="code">curl ${d.apiBase}/wallets \\
  -H "X-Api-Key: pk_…" -H "X-Api-Secret: sk_…"</pre>
 ${rich(v, 'dash.home.step_call_body', { reference: html`<a href="/docs">${v.t('dash.home.step_call_reference')}</a>` })}`)}
</ol>
</section>`;
}

/** The getting-started checklist is for those who can follow it (create a key, set a webhook): owners, admins, developers. */
export function homePage(v: View, d: HomeData): Html {
  return page(v, v.t('dash.home.title'), 'home', html`
${operatorNotice(v, d.operators)}
${balances(v, d.wallets)}

${balanceHistory(v, d.history, allows(v.session.role, 'statements:read'))}

${allows(v.session.role, 'keys:manage') ? checklist(v, d) : ''}`);
}
