// Operator commands on merchants (and the dashboard's, on the merchant's own account): build the
// command, decide it on the merchant stream (domain/merchant.ts), wait for the read models.
import { randomUUID } from 'node:crypto';
import type { Services } from './services.ts';
import * as M from '../domain/merchant.ts';
import { randomToken } from '../infra/secrets.ts';
import { streams } from './streams.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';

/**
 * Decides one command on a merchant's stream and waits until the read models show it. The command is
 * built on each attempt, with the time then (see Aggregates.execute).
 */
async function onMerchant(s: Services, merchantId: string, command: (at: string) => M.MerchantCommand, meta: EventMetadata): Promise<M.MerchantState> {
  const { state, append } = await s.aggregates.execute(streams.merchant(merchantId), M.merchantDecider, () => command(now(s)), meta);
  await s.awaitReadModels(append?.position);
  return state;
}

const now = (s: Services) => s.clock.now().toISOString();

export async function createMerchant(s: Services, name: string, meta: EventMetadata, merchantId = randomUUID()) {
  return onMerchant(s, merchantId, (at) => ({ type: 'CreateMerchant', data: { merchantId, name, at } }), meta);
}

export async function setMerchantStatus(s: Services, merchantId: string, status: M.MerchantStatus, meta: EventMetadata) {
  return onMerchant(s, merchantId, (at) => ({ type: 'SetMerchantStatus', data: { status, at } }), meta);
}

/** `scopes` as asked (CONTRACT §18); the decider checks and normalises them. */
export async function createApiKey(s: Services, merchantId: string, expiresAt: string | null, scopes: readonly string[], meta: EventMetadata) {
  const keyId = randomUUID();
  const apiKey = randomToken('pk_', 18);
  const apiSecret = randomToken('sk_', 32);
  const state = await onMerchant(s, merchantId, (at) => ({
    type: 'CreateApiKey', data: { keyId, apiKey, secretHash: s.secrets.hash(apiSecret), expiresAt, scopes, at },
  }), meta);
  return { key: state.keys[keyId]!, apiSecret };
}

export async function rotateApiKey(s: Services, merchantId: string, keyId: string, graceSeconds: number, meta: EventMetadata) {
  const apiSecret = randomToken('sk_', 32);
  const state = await onMerchant(s, merchantId, (at) => ({
    type: 'RotateApiKey', data: { keyId, secretHash: s.secrets.hash(apiSecret), graceSeconds, at },
  }), meta);
  return { key: state.keys[keyId]!, apiSecret };
}

export async function revokeApiKey(s: Services, merchantId: string, keyId: string, meta: EventMetadata) {
  return onMerchant(s, merchantId, (at) => ({ type: 'RevokeApiKey', data: { keyId, at } }), meta);
}

// Setting the webhook URL and rotating its secret: commands/webhook-endpoints.ts configureFirstEndpoint and
// rotateFirstEndpointSecret (the merchant's first endpoint, CONTRACT.md §11; decided with its endpoints stream).

export async function setRouting(s: Services, merchantId: string, routing: Partial<M.Routing>, meta: EventMetadata) {
  return onMerchant(s, merchantId, (at) => ({ type: 'SetRouting', data: { routing, at } }), meta);
}

export async function setPricing(s: Services, merchantId: string, pricing: Partial<M.Pricing>, meta: EventMetadata) {
  return onMerchant(s, merchantId, (at) => ({ type: 'SetPricing', data: { pricing, at } }), meta);
}

export async function addCorridor(s: Services, merchantId: string, corridor: string, meta: EventMetadata) {
  return onMerchant(s, merchantId, (at) => ({ type: 'AddCorridor', data: { corridor, at } }), meta);
}

export async function removeCorridor(s: Services, merchantId: string, corridor: string, meta: EventMetadata) {
  return onMerchant(s, merchantId, (at) => ({ type: 'RemoveCorridor', data: { corridor, at } }), meta);
}
