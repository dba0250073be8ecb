// Merchant commands on customers: load the customer stream, decide, append, wait for read models.
import type { Services } from './services.ts';
import * as C from '../domain/customer.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { toNew } from './aggregates.ts';
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
  const streamId = streams.customer(c.customerId);
  const at = s.clock.now().toISOString();
  const { result, append } = await s.aggregates.transact([streamId], async (tx) => {
    const loaded = await tx.load(streamId, C.customerDecider);
    const events = C.createCustomer(loaded.state, { ...c, at });
    const state = events.reduce(C.customerDecider.evolve, loaded.state);
    const result = events.length === 0 && loaded.state.exists ? existing(state) : created(state);
    return { appends: [{ streamId, expectedVersion: loaded.version, events: toNew(events, meta) }], result };
  });
  await s.awaitReadModels(append?.position);
  return result;
}
