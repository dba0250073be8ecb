// Operator commands on merchants: load the merchant stream, decide, append, wait for read models.
import { randomUUID } from 'node:crypto';
import type { Services } from './services.ts';
import * as M from '../domain/merchant.ts';
import { randomToken } from '../infra/secrets.ts';
import { toNew } from './aggregates.ts';
import { streams } from './streams.ts';
import type { EventMetadata } from '../infra/eventstore/types.ts';

type Decide = (state: M.MerchantState) => M.MerchantEvent[];

/** Runs one decision on a merchant's stream and waits until the read models show it. */
export async function onMerchant(s: Services, merchantId: string, decide: Decide, meta: EventMetadata): Promise<M.MerchantState> {
  const streamId = streams.merchant(merchantId);
  const { result, append } = await s.aggregates.transact([streamId], async (tx) => {
    const loaded = await tx.load(streamId, M.merchantDecider);
    const events = decide(loaded.state);
    const state = events.reduce(M.merchantDecider.evolve, loaded.state);
    return { appends: [{ streamId, expectedVersion: loaded.version, events: toNew(events, meta) }], result: state };
  });
  await s.awaitReadModels(append?.position);
  return result;
}

export async function createMerchant(s: Services, name: string, meta: EventMetadata, merchantId = randomUUID()) {
  return onMerchant(s, merchantId, (st) => M.createMerchant(st, { merchantId, name, at: s.clock.now().toISOString() }), meta);
}

export async function createApiKey(s: Services, merchantId: string, expiresAt: string | null, meta: EventMetadata) {
  const keyId = randomUUID();
  const apiKey = randomToken('pk_', 18);
  const apiSecret = randomToken('sk_', 32);
  const state = await onMerchant(s, merchantId, (st) => M.createApiKey(st, {
    keyId, apiKey, secretHash: s.secrets.hash(apiSecret), expiresAt, at: s.clock.now().toISOString(),
  }), meta);
  return { key: state.keys[keyId]!, apiSecret };
}

export async function rotateApiKey(s: Services, merchantId: string, keyId: string, graceSeconds: number, meta: EventMetadata) {
  const apiSecret = randomToken('sk_', 32);
  const state = await onMerchant(s, merchantId, (st) => M.rotateApiKey(st, {
    keyId, secretHash: s.secrets.hash(apiSecret), graceSeconds, at: s.clock.now().toISOString(),
  }), meta);
  return { key: state.keys[keyId]!, apiSecret };
}

export async function configureWebhook(s: Services, merchantId: string, url: string, meta: EventMetadata) {
  const signingSecret = randomToken('whsec_', 32);
  await onMerchant(s, merchantId, (st) => M.configureWebhook(st, {
    url, sealedSecret: s.secrets.encrypt(signingSecret), at: s.clock.now().toISOString(),
  }), meta);
  return { url, signingSecret };
}
