// Stream names, one place: `<aggregate>-<id>`.
export const streams = {
  merchant: (id: string) => `merchant-${id}`,
  customer: (id: string) => `customer-${id}`,
  quote: (id: string) => `quote-${id}`,
  payin: (id: string) => `payin-${id}`,
  payout: (id: string) => `payout-${id}`,
  refund: (id: string) => `refund-${id}`,
  /** A payment link (domain/payment-link.ts); its payins have their own streams. */
  paymentLink: (id: string) => `payment-link-${id}`,
  transfer: (id: string) => `transfer-${id}`,
  wallet: (merchantId: string, currency: string) => `wallet-${merchantId}-${currency}`,
  /** One per top-up: it, not the wallet, makes the top-up happen once (commands/wallets.ts). */
  topUp: (id: string) => `topup-${id}`,
  webhookTest: (id: string) => `webhook_test-${id}`,
  /** A bulk payout request (domain/payout-batch.ts); its payouts have their own streams. */
  payoutBatch: (id: string) => `payout_batch-${id}`,
  /** Every webhook endpoint of one merchant (domain/webhook-endpoints.ts). */
  webhookEndpoints: (merchantId: string) => `webhook_endpoints-${merchantId}`,
  /** An operator's availability per flow (CONTRACT §14), by operator code. */
  operator: (code: string) => `operator-${code}`,
};

export const isMerchantStream = (streamId: string) => streamId.startsWith('merchant-');
/** The streams a webhook's target is read from as of an event (workers/webhooks/targets.ts): the merchant's and its endpoints'. */
export const isWebhookTargetStream = (streamId: string) => isMerchantStream(streamId) || streamId.startsWith('webhook_endpoints-');
