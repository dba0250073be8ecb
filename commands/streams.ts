// Stream names, one place: `<aggregate>-<id>`.
export const streams = {
  merchant: (id: string) => `merchant-${id}`,
  customer: (id: string) => `customer-${id}`,
  quote: (id: string) => `quote-${id}`,
  payin: (id: string) => `payin-${id}`,
  payout: (id: string) => `payout-${id}`,
  transfer: (id: string) => `transfer-${id}`,
  wallet: (merchantId: string, currency: string) => `wallet-${merchantId}-${currency}`,
  /** One per top-up: it, not the wallet, makes the top-up happen once (commands/wallets.ts). */
  topUp: (id: string) => `topup-${id}`,
  webhookTest: (id: string) => `webhook_test-${id}`,
};

export const isMerchantStream = (streamId: string) => streamId.startsWith('merchant-');
