// Operator availability (CONTRACT §14, domain/operator-availability.ts): the operator API's commands
// and reads, and what quotes and payments read it with.
//
// Reading it on every quote and payment costs no query once an operator's stream is cached: inside
// `transact`, `tx.read` takes the cached state and the append commits only if the operator's stream
// is still at that version (checked under the append lock with the others). A change made by any
// process therefore reaches the next quote or payment of every process: a stale cache costs that
// request one conflict, then it is decided again on the stream as it is (a refusal on a cached state
// is confirmed on a fresh one the same way). An operator never set has no stream: that read finds
// nothing (one batched tail read) and decides on the default, operational.
import { servingProviders } from '../infra/providers/index.ts';
import type { Services } from './services.ts';
import type { AttemptLoader } from './aggregates.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { streams } from './streams.ts';
import { operator, OPERATORS } from '../domain/catalogue.ts';
import { DomainError } from '../domain/errors.ts';
import * as A from '../domain/operator-availability.ts';

/**
 * The availability of the operators named (unknown codes are left out: the decision refuses them
 * by its own rules), read so that the decision's append stands only on their streams as read.
 */
export async function readAvailabilities(tx: AttemptLoader, codes: Array<string | null | undefined>): Promise<A.OperatorAvailabilities> {
  const known = [...new Set(codes)].filter((c): c is string => typeof c === 'string' && operator(c) !== undefined);
  const read = await Promise.all(known.map(async (code) => {
    const { state } = await tx.read(streams.operator(code), A.operatorAvailabilityDecider);
    return [code, { payin: state.payin, payout: state.payout }] as const;
  }));
  return Object.fromEntries(read);
}

/** PUT /admin/operators/{code}/availability: sets the flows given; a value already in force records nothing. */
export async function setOperatorAvailability(
  s: Services,
  c: { operatorCode: string; payin?: A.Availability; payout?: A.Availability; changedBy: A.ChangedBy },
  meta: EventMetadata,
): Promise<A.OperatorAvailabilityState> {
  const { state } = await s.aggregates.execute(streams.operator(c.operatorCode), A.operatorAvailabilityDecider,
    (): A.OperatorAvailabilityCommand => ({ type: 'SetAvailability', data: { ...c, at: s.clock.now().toISOString() } }), meta);
  return state;
}

function knownOperator(code: string): void {
  if (!operator(code)) throw new DomainError('not_found', `Unknown operator ${code}`);
}

/** As the operator's stream is now (its tail read): what the operator API and GET /operators show. */
export async function operatorAvailability(s: Services, code: string): Promise<A.OperatorAvailabilityState> {
  knownOperator(code);
  return (await s.aggregates.load(streams.operator(code), A.operatorAvailabilityDecider)).state;
}

/** Every operator of the catalogue with its availability, in catalogue order. */
export async function allOperatorAvailabilities(s: Services): Promise<Array<{ code: string; state: A.OperatorAvailabilityState }>> {
  return Promise.all(OPERATORS.map(async (o) => ({ code: o.code, state: await operatorAvailability(s, o.code) })));
}

/** Every change of the operator's availability, oldest first: who, when, from what to what. */
export async function availabilityHistory(s: Services, code: string): Promise<Array<AvailabilityChanged['data'] & { version: number }>> {
  knownOperator(code);
  const events = await s.aggregates.store.readStream(streams.operator(code));
  return events.filter((e) => e.type === 'operator.availability_changed')
    .map((e) => ({ ...(e.data as AvailabilityChanged['data']), version: e.version }));
}

type AvailabilityChanged = Extract<A.OperatorAvailabilityEvent, { type: 'operator.availability_changed' }>;

/** PUT /admin/operators/{code}/routing: the providers its new legs go to, checked against those configured here. */
export async function setOperatorRouting(
  s: Services, c: { operatorCode: string; providers: unknown; changedBy: A.ChangedBy }, meta: EventMetadata,
): Promise<A.OperatorAvailabilityState> {
  const serving = servingProviders(s, c.operatorCode);
  const { state } = await s.aggregates.execute(streams.operator(c.operatorCode), A.operatorAvailabilityDecider,
    (): A.OperatorAvailabilityCommand => ({ type: 'SetRouting', data: { ...c, serving, at: s.clock.now().toISOString() } }), meta);
  return state;
}
