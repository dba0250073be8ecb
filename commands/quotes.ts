// Merchant commands on quotes: price from the merchant's routing and pricing (quoteDecider), append, wait for the read models.
import type { Services } from './services.ts';
import * as Q from '../domain/quote.ts';
import type { QuoteRequest } from '../domain/quote-pricing.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';
import { toNew } from './aggregates.ts';
import { streams } from './streams.ts';
import { created, createdEarlier, existing, type Created } from './created.ts';
import { readMerchant, requireCustomer } from './lookups.ts';
import { readAvailabilities } from './operator-availability.ts';

/**
 * Creates the quote `quoteId` (the idempotency claim's resource id); when its stream exists already
 * (a retry that took over the claim), answers the existing quote.
 */
export async function createQuote(
  s: Services,
  c: { quoteId: string; merchantId: string; customerId: string | null; request: QuoteRequest; fresh?: boolean },
  meta: EventMetadata,
): Promise<Created<Q.QuoteState>> {
  const streamId = streams.quote(c.quoteId);
  const earlier = await createdEarlier(s.aggregates, streamId, Q.quoteDecider, c.fresh);
  if (earlier) return earlier;
  if (c.customerId !== null) await requireCustomer(s, c.merchantId, c.customerId);
  const now = s.clock.now();
  const { result, append } = await s.aggregates.transact([streamId], async (tx) => {
    // Priced on the merchant's routing and pricing as they are when the quote commits.
    const merchant = await readMerchant(tx, c.merchantId);
    // ...and on its operators' availability as it is then (closed: refused, delayed: said on the quote).
    const r = c.request;
    const availability = await readAvailabilities(tx, r.flow === 'transfer' ? [r.payerOperatorCode, r.recipientOperatorCode] : [r.operatorCode]);
    const command: Q.QuoteCommand = {
      type: 'CreateQuote',
      data: {
        quoteId: c.quoteId, merchantId: c.merchantId, customerId: c.customerId, routing: merchant.routing, pricing: merchant.pricing, availability,
        at: now.toISOString(), expiresAt: new Date(now.getTime() + s.config.quoteTtlSeconds * 1000).toISOString(), ...c.request,
      },
    };
    const loaded = await tx.load(streamId, Q.quoteDecider);
    const events = Q.quoteDecider.decide(command, loaded.state);
    const state = events.reduce(Q.quoteDecider.evolve, loaded.state);
    const result = events.length === 0 && loaded.state.exists ? existing(state) : created(state);
    return { appends: [{ streamId, expectedVersion: loaded.version, events: toNew(events, meta) }], result };
  });
  await s.awaitReadModels(append?.position);
  return result;
}
