// The home page's notice of operators not fully available (CONTRACT §14): for each operator enabled
// for this merchant that is closed or delayed for a flow, what that means for its payments. Nothing
// at all while every one of them is operational.
import { html, type Html } from '../../infra/html.ts';
import type { Speech } from '../language.ts';
import { rich } from './layout.ts';

/** An operator as GET /operators shows it (the fields the notice reads). */
export interface OperatorStatus {
  operator_code: string;
  name: string;
  country_code: string;
  availability: { payin: string; payout: string };
}

const FLOWS = [['payin', 'dash.operators.flow_payin', 'dash.operators.closed_detail_payin'], ['payout', 'dash.operators.flow_payout', 'dash.operators.closed_detail_payout']] as const;

function line(v: Speech, o: OperatorStatus): Html[] {
  return FLOWS.flatMap(([flow, label, detail]) => {
    const a = o.availability[flow];
    const operator = `${o.name} (${o.operator_code})`;
    if (a === 'closed') {
      return [html`<li data-operator="${o.operator_code}" data-flow="${flow}" data-availability="closed"><strong>${v.t('dash.operators.closed', { operator, flow: v.t(label) })}</strong>
 ${rich(v, detail, { code: html`<code>operator_unavailable</code>` })}</li>`];
    }
    if (a === 'delayed') {
      return [html`<li data-operator="${o.operator_code}" data-flow="${flow}" data-availability="delayed">${v.t('dash.operators.delayed', { operator, flow: v.t(label) })}</li>`];
    }
    return [];
  });
}

export function operatorNotice(v: Speech, operators: OperatorStatus[]): Html {
  const lines = operators.flatMap((o) => line(v, o));
  if (lines.length === 0) return html``;
  const closed = operators.some((o) => o.availability.payin === 'closed' || o.availability.payout === 'closed');
  return html`<section class="notice ${closed ? 'error' : 'warn'}" role="${closed ? 'alert' : 'status'}" aria-labelledby="operators-h" id="operator-status">
<h2 id="operators-h">${v.t('dash.operators.title')}</h2>
<ul>${lines}</ul>
<p class="small">${rich(v, 'dash.operators.where', { call: html`<code>GET /operators</code>` })}</p>
</section>`;
}
