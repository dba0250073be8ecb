// Home: balances per currency and the getting-started checklist that takes a new merchant from
// first sign-in to a working API key and webhook with nothing else to read.
import { html, type Html } from '../html.ts';
import type { Session } from '../session.ts';
import { BASE, money, page, when } from './layout.ts';
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

function step(done: boolean, title: string, body: Html): Html {
  return html`<li class="${done ? 'done' : 'todo'}">
  <span class="tick" aria-hidden="true">${done ? '✓' : '○'}</span>
  <div><strong>${title}</strong> <span class="sr-only">${done ? '(done)' : '(to do)'}</span>${done ? html` <span class="muted">done</span>` : ''}
  <div class="step-body">${body}</div></div>
</li>`;
}

export function homePage(session: Session, d: HomeData): Html {
  const p = d.progress;
  return page(session, 'Home', 'home', html`
${operatorNotice(d.operators)}
<section aria-labelledby="balances-h">
<h2 id="balances-h">Balances</h2>
<div class="cards">
${d.wallets.map((w) => html`<div class="card" data-currency="${w.currency}">
  <h3>${w.currency}</h3>
  <p class="big">${money(w.available, w.currency)}</p>
  <p class="muted">available · ${money(w.reserved, w.currency)} reserved for payouts and transfers in flight</p>
  <p class="muted small">updated ${when(w.updated_at)}</p>
</div>`)}
</div>
</section>

${balanceHistory(d.history)}

<section aria-labelledby="start-h">
<h2 id="start-h">Getting started</h2>
<ol class="checklist">
${step(true, 'Sign in to the dashboard', html`You are signed in as ${session.email}.`)}
${step(p.activeKey, 'Create an API key', html`Your servers call the API with an API key and its secret (headers
 <code>X-Api-Key</code> and <code>X-Api-Secret</code>). <a href="${BASE}/keys">Create one on the API keys page</a>; the
 secret is shown once, so store it in your secret manager straight away.`)}
${step(p.webhookUrl !== null, 'Set your webhook URL', html`Payment results are sent to your server as signed
 <code>POST</code> requests. <a href="${BASE}/webhooks">Enter the URL on the Webhooks page</a> and keep the signing
 secret it shows you: your server checks each request's <code>X-Service-Signature</code> with it
 (HMAC-SHA256 of <code>&lt;X-Service-Timestamp&gt;.&lt;raw body&gt;</code>).`)}
${step(p.deliveredTestEvent, 'Send a test event and see it delivered', html`On the <a href="${BASE}/webhooks">Webhooks page</a>, press
 <em>Send test event</em>. Your server must answer <code>2xx</code>; the <a href="${BASE}/events">event log</a> shows every
 attempt with the status your server answered, and lets you redeliver.`)}
${step(p.firstPayment, 'Make your first API call', html`Check your key with a read, then create a quote and a payin:
<pre class="code">curl ${d.apiBase}/wallets \\
  -H "X-Api-Key: pk_…" -H "X-Api-Secret: sk_…"</pre>
 Every endpoint, with examples, is in the <a href="/docs">API reference</a> served by this service. Payments you create
 appear under Payins, Payouts and Transfers.`)}
</ol>
</section>`);
}
