// Reads other aggregates that money commands decide with: the merchant (routing, pricing) and the
// customer named in a body. Read from the event store (not read models), so a decision never sees
// a lagging projection; inside `transact`, the merchant is held unchanged until the commit.
import type { Services } from './services.ts';
import { customerDecider, requireNamedCustomer, type CustomerState } from '../domain/customer.ts';
import type { KycGate } from '../domain/kyc.ts';
import { merchantDecider, requireMerchant, type MerchantState } from '../domain/merchant.ts';
import { streams } from './streams.ts';
import type { AttemptLoader } from './aggregates.ts';

/**
 * Another merchant's customer gets the same answer as no customer at all. A customer is never
 * deleted nor moved to another merchant, so a cached one (known to exist) answers without a read.
 */
export async function requireCustomer(s: Services, merchantId: string, customerId: string): Promise<void> {
  const { state } = await s.aggregates.peek(streams.customer(customerId), customerDecider);
  requireNamedCustomer(state, merchantId);
}

/**
 * The merchant as a decision inside `transact` reads it: the append commits only if the merchant's
 * stream is still at the version read (a change to its pricing or status in between: decided again).
 */
export async function readMerchant(tx: AttemptLoader, merchantId: string): Promise<MerchantState> {
  const { state } = await tx.read(streams.merchant(merchantId), merchantDecider);
  requireMerchant(state);
  return state;
}

export async function loadMerchant(s: Services, merchantId: string): Promise<MerchantState> {
  const { state } = await s.aggregates.load(streams.merchant(merchantId), merchantDecider);
  requireMerchant(state);
  return state;
}

/**
 * What the KYC gate decides with (routing kyc_required_operators), inside `transact`: the merchant
 * as the decision read it, and the customer's KYC status only when the operator is on the merchant's
 * list, read as the decision's too (the cache trusted, the append held to its version: a change in
 * between decides again). `customer` reads it once for the calls of one decision.
 */
export async function kycGate(merchant: MerchantState, operatorCode: string, customer: () => Promise<CustomerState>): Promise<KycGate> {
  const requiredOperators = merchant.routing.kyc_required_operators ?? [];
  if (!requiredOperators.includes(operatorCode)) return { requiredOperators, customerStatus: null };
  return { requiredOperators, customerStatus: (await customer()).kycStatus };
}

/** The customer as the decision reads it (tx.read), once however many times it is asked. */
export function customerReader(tx: AttemptLoader, customerId: string): () => Promise<CustomerState> {
  let read: Promise<CustomerState> | undefined;
  return () => (read ??= tx.read(streams.customer(customerId), customerDecider).then((l) => l.state));
}
