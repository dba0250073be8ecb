// Operator availability (CONTRACT.md §14): per operator (stream `operator-<code>`) and flow (payin,
// payout), `operational` (the default: an operator nobody ever set), `delayed` or `closed`. The
// operator API sets it; every change is an event saying who changed what from what to what, when.
//
// Quotes and payments decide with it as data in their command (`OperatorAvailabilities`, the
// operators' states as read in the same transaction): `closed` on a flow refuses a new quote or
// payment on it (400 operator_unavailable); `delayed` is accepted and said on the quote. A payment
// already created is never checked again: an outage stops new business, never what is in flight.
import { refuse } from './errors.ts';
import { unreachable, type CommandDecider, type DomainEvent } from './decider.ts';
import { operator } from './catalogue.ts';
import { checkedRouting, DEFAULT_ROUTING, type ChangedBy, type RoutingSet, type SetRouting } from './operator-routing.ts';

export type { ChangedBy };

export const AVAILABILITIES = ['operational', 'delayed', 'closed'] as const;
export type Availability = (typeof AVAILABILITIES)[number];

/** The flows an operator runs; a transfer is a payin (the payer's operator) then a payout (the recipient's). */
export const AVAILABILITY_FLOWS = ['payin', 'payout'] as const;
type AvailabilityFlow = (typeof AVAILABILITY_FLOWS)[number];

export type FlowAvailability = Record<AvailabilityFlow, Availability>;


export interface AvailabilityChange {
  flow: AvailabilityFlow;
  from: Availability;
  to: Availability;
}

export type OperatorAvailabilityEvent =
  | DomainEvent<'operator.availability_changed', {
    operator_code: string;
    /** Only the flows that changed, each from and to. */
    changes: AvailabilityChange[];
    changed_by: ChangedBy;
    at: string;
  }>
  /** The providers that carry its legs, in order (CONTRACT §15, domain/operator-routing.ts). */
  | DomainEvent<'operator.routing_set', RoutingSet>;

export interface OperatorAvailabilityState extends FlowAvailability {
  operatorCode: string | null;
  /** The last change, null while never set (every flow operational). */
  updatedAt: string | null;
  updatedBy: ChangedBy | null;
  /** The providers its new legs go to, in order (the sandbox while never set). */
  routing: readonly string[];
}

export interface SetAvailability {
  operatorCode: string;
  payin?: Availability;
  payout?: Availability;
  changedBy: ChangedBy;
  at: string;
}

export type OperatorAvailabilityCommand = { type: 'SetAvailability'; data: SetAvailability } | { type: 'SetRouting'; data: SetRouting };

function setRouting(s: OperatorAvailabilityState, c: SetRouting): OperatorAvailabilityEvent[] {
  if (!operator(c.operatorCode)) refuse('not_found', `Unknown operator ${c.operatorCode}`);
  const providers = checkedRouting(c);
  // The routing already in force records nothing (a retried PUT is not a second change).
  if (providers.join(',') === s.routing.join(',')) return [];
  return [{ type: 'operator.routing_set', data: { operator_code: c.operatorCode, providers, previous: [...s.routing], changed_by: c.changedBy, at: c.at } }];
}

const OPERATIONAL: FlowAvailability = { payin: 'operational', payout: 'operational' };

function set(s: OperatorAvailabilityState, c: SetAvailability): OperatorAvailabilityEvent[] {
  if (!operator(c.operatorCode)) refuse('not_found', `Unknown operator ${c.operatorCode}`);
  if (c.payin === undefined && c.payout === undefined) {
    refuse('bad_request', 'Give payin, payout or both', [{ field: 'payin', message: 'payin or payout is required' }]);
  }
  const changes = AVAILABILITY_FLOWS.flatMap((flow): AvailabilityChange[] => {
    const to = c[flow];
    if (to === undefined) return [];
    if (!AVAILABILITIES.includes(to)) refuse('bad_request', `${flow} must be one of ${AVAILABILITIES.join(', ')}`, [{ field: flow, message: 'unknown availability' }]);
    return to === s[flow] ? [] : [{ flow, from: s[flow], to }];
  });
  // Setting what is already in force records nothing (a retried PUT is not a second change).
  if (changes.length === 0) return [];
  return [{ type: 'operator.availability_changed', data: { operator_code: c.operatorCode, changes, changed_by: c.changedBy, at: c.at } }];
}

export const operatorAvailabilityDecider: CommandDecider<OperatorAvailabilityState, OperatorAvailabilityEvent, OperatorAvailabilityCommand> = {
  initialState: (): OperatorAvailabilityState => ({ ...OPERATIONAL, operatorCode: null, updatedAt: null, updatedBy: null, routing: DEFAULT_ROUTING }),
  evolve(s, e) {
    switch (e.type) {
      case 'operator.availability_changed': {
        const next = { ...s, operatorCode: e.data.operator_code, updatedAt: e.data.at, updatedBy: e.data.changed_by };
        for (const c of e.data.changes) next[c.flow] = c.to;
        return next;
      }
      case 'operator.routing_set':
        // The availability's own "last change" stays the availability's: the routing has its own history.
        return { ...s, operatorCode: e.data.operator_code, routing: e.data.providers };
      default:
        return unreachable(e);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'SetAvailability':
        return set(state, command.data);
      case 'SetRouting':
        return setRouting(state, command.data);
      default:
        return unreachable(command);
    }
  },
};

// ---- what quotes and payments decide with ----

/** The operators a decision uses, by code, as read with it; an operator left out is operational. */
export type OperatorAvailabilities = Readonly<Record<string, FlowAvailability>>;

/** What a quote says of its operators' availability: `delayed` when one it uses is (a transfer: either leg). */
export type QuotedAvailability = Exclude<Availability, 'closed'>;

/**
 * Each (operator, flow) a quote or payment uses must not be closed (400 operator_unavailable, naming
 * the field that chose the operator); answers `delayed` if one of them is, else `operational`.
 */
export function requireAvailable(
  availabilities: OperatorAvailabilities,
  uses: Array<{ operatorCode: string; flow: AvailabilityFlow; field: string }>,
): QuotedAvailability {
  let worst: QuotedAvailability = 'operational';
  for (const u of uses) {
    const a = (availabilities[u.operatorCode] ?? OPERATIONAL)[u.flow];
    if (a === 'closed') {
      refuse('operator_unavailable', `${u.operatorCode} is closed for ${u.flow}s: try again later or use another operator`, [
        { field: u.field, message: `${u.operatorCode} is closed for ${u.flow}s` },
      ]);
    }
    if (a === 'delayed') worst = 'delayed';
  }
  return worst;
}
