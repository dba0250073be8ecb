// The home page's notice of operators not fully available (CONTRACT §14): for each operator enabled
// for this merchant that is closed or delayed for a flow, what that means for its payments. Nothing
// at all while every one of them is operational.
import { html, type Html } from '../html.ts';

/** An operator as GET /operators shows it (the fields the notice reads). */
export interface OperatorStatus {
  operator_code: string;
  name: string;
  country_code: string;
  availability: { payin: string; payout: string };
}

const FLOWS = [['payin', 'payins (collections)'], ['payout', 'payouts (disbursements)']] as const;

function line(o: OperatorStatus): Html[] {
  return FLOWS.flatMap(([flow, label]) => {
    const a = o.availability[flow];
    if (a === 'closed') {
      return [html`<li data-operator="${o.operator_code}" data-flow="${flow}" data-availability="closed"><strong>${o.name} (${o.operator_code})
 is closed for ${label}.</strong> New quotes and ${flow}s on it are refused (<code>operator_unavailable</code>); those already made still complete.</li>`];
    }
    if (a === 'delayed') {
      return [html`<li data-operator="${o.operator_code}" data-flow="${flow}" data-availability="delayed">${o.name} (${o.operator_code})
 is delayed for ${label}: they are accepted but may take longer to complete.</li>`];
    }
    return [];
  });
}

export function operatorNotice(operators: OperatorStatus[]): Html {
  const lines = operators.flatMap(line);
  if (lines.length === 0) return html``;
  const closed = operators.some((o) => o.availability.payin === 'closed' || o.availability.payout === 'closed');
  return html`<section class="notice ${closed ? 'error' : 'warn'}" role="${closed ? 'alert' : 'status'}" aria-labelledby="operators-h" id="operator-status">
<h2 id="operators-h">Operator status</h2>
<ul>${lines}</ul>
<p class="small">The list of your operators and their availability is at <code>GET /operators</code>.</p>
</section>`;
}
