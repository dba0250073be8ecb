// Merchant commands on customers: decide the command on the customer stream, wait for read models.
import type { Services } from './services.ts';
import * as C from '../domain/customer.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { streams } from './streams.ts';
import { created, existing, type Created } from './created.ts';

/**
 * Creates the customer `customerId` (the idempotency claim's resource id). When its stream already
 * exists (a retry taking over a claim whose first attempt had appended), answers the existing customer.
 */
export async function createCustomer(
  s: Services,
  c: Omit<C.CreateCustomer, 'at'>,
  meta: EventMetadata,
): Promise<Created<C.CustomerState>> {
  const command: C.CustomerCommand = { type: 'CreateCustomer', data: { ...c, at: s.clock.now().toISOString() } };
  const { state, events, append } = await s.aggregates.execute(streams.customer(c.customerId), C.customerDecider, command, meta);
  await s.awaitReadModels(append?.position);
  return events.length === 0 && state.exists ? existing(state) : created(state);
}
