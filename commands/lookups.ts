// Reads other aggregates that money commands decide with: the merchant (routing, pricing) and the
// customer named in a body. Read from the event store (not read models), so a decision never sees
// a lagging projection; inside `transact`, the merchant is held unchanged until the commit.
import type { Services } from './services.ts';
import { customerDecider, requireNamedCustomer } from '../domain/customer.ts';
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
 * What the KYC gate decides with (routing kyc_required_operators): the customer's KYC status is read
 * only when the operator is on the merchant's list.
 */
export async function kycGate(s: Services, merchantId: string, customerId: string, operatorCode: string): Promise<KycGate> {
  const merchant = await loadMerchant(s, merchantId);
  const requiredOperators = merchant.routing.kyc_required_operators ?? [];
  if (!requiredOperators.includes(operatorCode)) return { requiredOperators, customerStatus: null };
  const { state } = await s.aggregates.load(streams.customer(customerId), customerDecider);
  return { requiredOperators, customerStatus: state.kycStatus };
}
