// Each operation's examples, by operationId: the request body (when it takes one) and its success
// answer. document.ts puts them on the operation's JSON media types; webhooks' entries are the bodies
// the service sends. Built from the recorded resources (./resources.ts), so ids agree across them.
import * as x from './resources.ts';


/** MTN's callback body: the request-to-pay as its status query answers it. */
const mtnCallback = {
  financialTransactionId: '363440463', externalId: 'dfce194e-058c-4628-b894-9807d3bc9dc4', amount: '5000', currency: 'XAF',
  payer: { partyIdType: 'MSISDN', partyId: '237670000001' }, payerMessage: 'Payment', payeeNote: 'Payment', status: 'SUCCESSFUL',
};
export interface OperationExample {
  request?: unknown;
  response: unknown;
}

/** What was sent to create the customer: its non-null profile fields. */
const customerRequest = Object.fromEntries(Object.entries(x.customer).filter(([k, v]) =>
  v !== null && !['id', 'merchant_id', 'customer_type', 'kyc_status', 'metadata', 'created_at', 'updated_at'].includes(k)));
/** A created resource as a later read shows it: without the idempotent answer's `_meta`. */
const read = <T extends { _meta: unknown }>(created: T) => Object.fromEntries(Object.entries(created).filter(([k]) => k !== '_meta'));
const list = <T>(item: T) => ({ data: [item], has_more: true, next_cursor: 'eyJjIjoiMjAyNi0xMS0yNlQwNDoyOToxNS45MjhaIiwiaSI6ImRmY2UxOTRlIn0' });

/** POST /payouts/bulk (CONTRACT §10): a batch of two, one created, one refused as its own POST /payouts would be. */
const operationsPayoutRequest = {
  quote_id: x.payoutCreated.quote_id, customer_id: x.payoutCreated.customer_id,
  payment_reason_text: x.payoutCreated.payment_reason_text, recipient: x.payoutCreated.recipient,
};
const payoutBatch = {
  id: '9c41e7d2-5a86-4f0b-b3d1-6e2a8f5c7b19',
  created_at: x.payoutCreated.created_at,
  items: [
    { reference: 'INV-1', status: 201, payout: read(x.payoutCreated) },
    { reference: 'INV-2', status: 400, error: { error: { code: 'insufficient_balance', message: 'Insufficient XOF balance: 10000 needed, 2500 available' } } },
  ],
};

/** The payin quote once the payin used it, as GET /quotes/{id} reads it. */
const consumedQuote = { ...read(x.payinQuote), status: 'consumed', consumed_by: { type: 'payin', id: x.payin.id }, consumed_at: x.payin.created_at };

const payinCompleted = {
  id: '3f1a8c52-6d2e-4b7a-9f0c-2e5d8b7a1c44', event: 'payin.completed', created_at: x.payin.updated_at,
  data: { type: 'payin', id: x.payin.id, object: x.payin },
};
const webhookEvent = {
  ...payinCompleted,
  delivery_status: 'delivered', attempt_count: 1, next_attempt_at: null, last_attempt_at: '2026-11-26T04:29:16.102Z', delivered_at: '2026-11-26T04:29:16.102Z',
  attempts: [{
    endpoint_id: '6e1d4c3b-2a19-4f08-9e7d-5c4b3a291807', attempt: 1, trigger: 'scheduled', attempted_at: '2026-11-26T04:29:16.102Z', url: 'https://boutique-awa.example/webhooks/payments',
    status_code: 200, error: null, duration_ms: 84, succeeded: true,
  }],
};
const envelope = (event: string, type: string, object: { id: string; created_at: string }, at: string) => ({
  id: '8b0d3c9e-8a4f-4a51-9a4e-1c2d3e4f5a6b', event, created_at: at, data: { type, id: object.id, object },
});
const testObject = {
  id: '5c2b7e10-4d3a-4f6b-8e21-9a0c7d5e3b12', merchant_id: x.merchant.id,
  message: 'A test event sent from the merchant dashboard. Answer 2xx to acknowledge it; it changes nothing.', created_at: '2026-11-26T04:30:02.511Z',
};
const kycDocument = {
  document_type: 'national_id', document_number: 'CM-1234567', issue_country_code: 'CM', issue_date: '2021-03-15', expiry_date: '2031-03-14',
  front_file_url: 'https://files.boutique-awa.example/kyc/ama-front.jpg', back_file_url: 'https://files.boutique-awa.example/kyc/ama-back.jpg',
};
const endpointRequest = { url: 'https://boutique-awa.example/webhooks/refunds', enabled_events: ['refund.completed', 'refund.failed'], description: 'Refunds to the accounting system' };
const endpoint = {
  id: '6e1d4c3b-2a19-4f08-9e7d-5c4b3a291807', ...endpointRequest, status: 'enabled', created_at: '2026-11-26T04:35:12.604Z', updated_at: '2026-11-26T04:35:12.604Z',
};
const webhookSecret = { url: 'https://boutique-awa.example/webhooks/payments', signing_secret: 'whsec_3kQ9vX2pL7mN4bR8tY1wZ6cF0hJ5sD2a' };

export const operationExamples: Record<string, OperationExample> = {
  // System.
  healthz: { response: { status: 'ok' } },
  readyz: { response: { status: 'ready', checks: { event_store: true, database: true, bus: true, migrations: true } } },
  openapi: { response: { openapi: '3.1.0', info: { title: 'Merchant Payments API', version: '1.0.0' }, paths: {} } },
  docs: { response: '<!doctype html>\n<html lang="en"><head><title>Merchant Payments API</title>…</head><body><div id="ui"></div>…</body></html>' },
  // Operator: merchants, keys, webhook, routing, pricing, funding, dashboard users.
  adminCreateMerchant: { request: { name: x.merchant.name }, response: x.merchantCreated },
  adminGetMerchant: { response: x.merchant },
  adminSetMerchantStatus: { request: { status: 'active' }, response: x.merchant },
  adminCreateApiKey: { request: { expires_at: '2027-11-26T00:00:00Z', scopes: ['payins:write', 'payins:read', 'wallets:read'] }, response: { ...x.apiKeyCreated, expires_at: '2027-11-26T00:00:00.000Z' } },
  adminListApiKeys: { response: { data: [{ ...x.apiKeyRevoked, status: 'active' }] } },
  adminRotateApiKey: { request: { grace_seconds: 3600 }, response: x.apiKeyRotated },
  adminRevokeApiKey: { response: x.apiKeyRevoked },
  adminSetWebhook: { request: { url: webhookSecret.url }, response: webhookSecret },
  adminRotateWebhookSecret: { response: { ...webhookSecret, signing_secret: 'whsec_7hT2nB5vC8xK1mQ4rW9yE3uI6oP0aS5d' } },
  adminSetRouting: { request: { corridors: x.routing.corridors }, response: x.routing },
  adminAddCorridor: { response: x.routing },
  adminRemoveCorridor: { response: { ...x.routing, corridors: [] } },
  adminSetPricing: { request: { payin: x.pricing.payin }, response: x.pricing },
  adminTopUpWallet: { request: { amount: x.topUp.amount }, response: x.topUp },
  adminInviteDashboardUser: { request: { email: x.dashboardInvitation.email, role: x.dashboardInvitation.role }, response: x.dashboardInvitation },
  adminListDashboardUsers: {
    response: { data: [Object.fromEntries(Object.entries(x.dashboardInvitation).filter(([k]) => !k.startsWith('invitation_')))] },
  },
  adminResetDashboardUserTwoFactor: {
    response: {
      ...Object.fromEntries(Object.entries(x.dashboardInvitation).filter(([k]) => !k.startsWith('invitation_'))),
      status: 'active', password_set_at: '2026-11-26T04:31:02.114Z', last_sign_in_at: '2026-11-27T08:12:40.551Z',
    },
  },
  // Operator: operator availability (CONTRACT §14).
  adminListOperators: {
    response: { data: [{ operator_code: 'CM_MTN_MOMO', name: 'MTN Mobile Money', country_code: 'CM', payin: 'operational', payout: 'operational', updated_at: null, updated_by: null }, x.operatorAvailability] },
  },
  adminGetOperatorAvailability: { response: x.operatorAvailability },
  adminSetOperatorAvailability: { request: { payout: 'closed' }, response: x.operatorAvailability },
  adminListOperatorAvailabilityChanges: { response: x.operatorAvailabilityHistory },
  adminGetOperatorRouting: { response: { operator_code: 'CM_MTN_MOMO', providers: ['sandbox'] } },
  adminSetOperatorRouting: { request: { providers: ['mtn_momo', 'pawapay'] }, response: { operator_code: 'CM_MTN_MOMO', providers: ['mtn_momo', 'pawapay'] } },
  // Operator: operations.
  adminReadStream: { response: x.eventHistory },
  adminRunAudit: { response: x.audit },
  adminWalletStatement: { response: x.statement },
  adminProjectionStatus: { response: x.projections },
  adminRebuildProjection: {
    response: {
      projection: 'money', state: 'running', started_at: '2026-11-26T04:31:00.000Z', finished_at: null, done: 0, total: 88,
      events_per_second: 0, eta_seconds: null, position: null, error: null,
    },
  },
  adminListAuditLog: {
    response: {
      data: [{
        id: '6b1f8d1e-2c4a-4b8e-9f0a-1d2e3f4a5b6c', at: '2026-11-26T04:31:00.000Z', merchant_id: '0d9c7a52-1f4e-4c1b-9a55-3f1c2d4b5e6f',
        actor: { type: 'member', id: '394aa3ed-2142-4bde-9702-726f4c41fe4d' }, action: 'api_key.revoked',
        target: { type: 'api_key', id: '4f2f4ed4-9b18-48aa-8f9c-a3b1d3e869f7' }, request_id: '3c5e8a10-4b7d-4e2f-9a61-0c2b7d9e5f13', ip: '203.0.113.7',
      }],
      has_more: false, next_cursor: null,
    },
  },
  metrics: { response: '# HELP http_requests_total HTTP requests answered\n# TYPE http_requests_total counter\nhttp_requests_total{method="POST",route="/payins",status="201"} 3\n' },
  providerCallback: {
    request: { reference: 'leg-dfce194e-058c-4628-b894-9807d3bc9dc4', provider_reference: 'SBX-7F3K2Q9M', status: 'completed', reason: null },
    response: { received: true },
  },
  // As MTN's and pawaPay's documentation show them: hints only, the status is asked at the provider.
  mtnMomoCallback: { request: mtnCallback, response: { received: true } },
  mtnMomoCallbackPut: { request: mtnCallback, response: { received: true } },
  pawapayCallback: {
    request: {
      depositId: 'dfce194e-058c-4628-b894-9807d3bc9dc4', status: 'COMPLETED', amount: '5000', currency: 'XAF', country: 'CMR',
      payer: { type: 'MMO', accountDetails: { phoneNumber: '237670000001', provider: 'MTN_MOMO_CMR' } }, created: '2026-11-26T04:30:05Z',
    },
    response: { received: true },
  },
  // Merchant: catalogue, customers, KYC.
  listOperators: { response: x.operators },
  listCorridors: { response: x.corridors },
  createCustomer: { request: customerRequest, response: x.customerCreated },
  getCustomer: { response: x.customer },
  listCustomers: { response: list(x.customer) },
  getCustomerEvents: { response: x.eventHistory },
  submitKyc: {
    request: { documents: [kycDocument] },
    response: {
      customer_id: x.customer.id, kyc_status: 'pending',
      documents: [{ id: '6e4d2c1b-0a9f-4e8d-b7c6-5a4b3c2d1e0f', ...kycDocument, selfie_file_url: null, status: 'uploaded', rejection_reason: null, created_at: '2026-11-26T04:30:10.000Z' }],
    },
  },
  getKyc: { response: { customer_id: x.customer.id, kyc_status: 'not_started', documents: [] } },
  // Merchant: quotes and payments.
  createPayinQuote: {
    request: {
      customer_id: x.payinQuote.customer_id, country_code: x.payinQuote.country_code, operator_code: x.payinQuote.operator_code,
      rail_type: x.payinQuote.rail_type, send_amount: x.payinQuote.send_amount, send_currency: x.payinQuote.send_currency,
    },
    response: x.payinQuote,
  },
  createPayoutQuote: {
    request: {
      customer_id: x.payoutQuote.customer_id, country_code: x.payoutQuote.country_code, operator_code: x.payoutQuote.operator_code,
      rail_type: x.payoutQuote.rail_type, send_amount: x.payoutQuote.send_amount, send_currency: x.payoutQuote.send_currency,
    },
    response: x.payoutQuote,
  },
  createTransferQuote: {
    request: {
      payer_operator_code: x.transferQuote.payer_operator_code, recipient_operator_code: x.transferQuote.recipient_operator_code,
      payin_currency: x.transferQuote.payin_currency, payout_currency: x.transferQuote.payout_currency, payin_amount: x.transferQuote.payin_amount,
    },
    response: x.transferQuote,
  },
  getQuote: { response: consumedQuote },
  listQuotes: { response: list(consumedQuote) },
  getQuoteEvents: { response: x.eventHistory },
  createPayin: {
    request: { quote_id: x.payinCreated.quote_id, customer_id: x.payinCreated.customer_id, source: x.payinCreated.source, metadata: { order: 'A-42' } },
    response: { ...x.payinCreated, metadata: { order: 'A-42' } },
  },
  getPayin: { response: x.payin },
  listPayins: { response: list(x.payin) },
  getPayinEvents: { response: x.eventHistory },
  createPayout: {
    request: {
      quote_id: x.payoutCreated.quote_id, customer_id: x.payoutCreated.customer_id,
      payment_reason_text: x.payoutCreated.payment_reason_text, recipient: x.payoutCreated.recipient,
    },
    response: x.payoutCreated,
  },
  createPayoutBatch: {
    request: { items: [
      { reference: 'INV-1', ...operationsPayoutRequest },
      { reference: 'INV-2', ...operationsPayoutRequest, quote_id: '0b8c2a51-3f7e-4d19-a6c2-9e4f1d7b3a60' },
    ] },
    response: { ...payoutBatch, _meta: { idempotency_key: 'bulk-2026-11-26', idempotency_replayed: false } },
  },
  getPayoutBatch: { response: { ...payoutBatch, items: [{ ...payoutBatch.items[0], payout: x.payout }, payoutBatch.items[1]] } },
  getPayout: { response: x.payout },
  listPayouts: { response: list(x.payout) },
  getPayoutEvents: { response: x.eventHistory },
  createRefund: {
    request: { payin_id: x.refundCreated.payin_id, amount: x.refundCreated.amount, reason: x.refundCreated.reason, metadata: x.refundCreated.metadata },
    response: x.refundCreated,
  },
  getRefund: { response: x.refund },
  listRefunds: { response: list(x.refund) },
  getRefundEvents: { response: x.eventHistory },
  // Payment links (CONTRACT §16).
  createPaymentLink: {
    request: {
      amount: x.paymentLinkCreated.amount, currency: x.paymentLinkCreated.currency, description: x.paymentLinkCreated.description,
      expires_at: x.paymentLinkCreated.expires_at, max_payments: x.paymentLinkCreated.max_payments, metadata: x.paymentLinkCreated.metadata,
    },
    response: x.paymentLinkCreated,
  },
  listPaymentLinks: { response: list(x.paymentLink) },
  getPaymentLink: { response: x.paymentLink },
  deactivatePaymentLink: { response: { ...read(x.paymentLinkCreated), status: 'inactive', updated_at: '2026-11-26T04:35:12.880Z' } },
  listPaymentLinkPayments: { response: list(x.paymentLinkPayin) },
  getPaymentLinkEvents: { response: x.eventHistory },
  createTransfer: {
    request: { quote_id: x.transferCreated.quote_id, customer_id: x.transferCreated.customer_id, payer: x.transferCreated.payer, recipient: x.transferCreated.recipient },
    response: x.transferCreated,
  },
  getTransfer: { response: x.transfer },
  listTransfers: { response: list(x.transfer) },
  getTransferEvents: { response: x.eventHistory },
  relaunchTransferPayout: { request: { recipient: x.transferRelaunched.recipient }, response: x.transferRelaunched },
  listWallets: { response: x.wallets },
  listWalletTransactions: {
    // The statement's movements as the wallet's list shows them: newest first.
    response: {
      data: [...x.statement.lines].reverse().slice(0, 2).map((l) => ({
        id: l.event_id, at: l.at, movement: l.movement, reference: { type: l.reference_type, id: l.reference_id },
        available_delta: l.available_delta, reserved_delta: l.reserved_delta, fee: l.fee,
        available_balance: l.available_balance, reserved_balance: l.reserved_balance,
      })),
      has_more: true, next_cursor: 'WyIyMDI2LTExLTI2IDA0OjI5OjE1Ljg2KzAwIiwxM10',
    },
  },
  getStatement: { response: x.statement },
  // Merchant: webhook endpoints (CONTRACT §11).
  createWebhookEndpoint: { request: endpointRequest, response: { ...endpoint, signing_secret: 'whsec_7pR2mK9xQ4vN1bT6yW3zL8cH5sF0jD4g', _meta: { idempotency_key: 'endpoint-orders-1', idempotency_replayed: false } } },
  listWebhookEndpoints: { response: { data: [endpoint] } },
  getWebhookEndpoint: { response: endpoint },
  updateWebhookEndpoint: { request: { enabled_events: ['*'], status: 'enabled' }, response: { ...endpoint, enabled_events: ['*'], updated_at: '2026-11-26T04:35:40.210Z' } },
  rotateWebhookEndpointSecret: { request: { activate_after_seconds: 86400 }, response: { signing_secret: 'whsec_1aB4cD7eF0gH3iJ6kL9mN2oP5qR8sT1u', activates_at: '2026-11-27T04:36:02.118Z' } },
  // Merchant: webhook events.
  listEvents: { response: list(webhookEvent) },
  getEvent: { response: webhookEvent },
  redeliverEvent: { response: webhookEvent },
  // The event feed (CONTRACT §12): one event as the stream frames it, then an idle stream's comment.
  streamEvents: { response: `: stream open\n\nid: ${payinCompleted.id}\ndata: ${JSON.stringify(payinCompleted)}\n\n: keep-alive\n\n` },
};

/** The body a webhook event sends, for the events whose recorded snapshot we have (completions, a failure, the test event). */
export const webhookExamples: Record<string, unknown> = {
  'payin.completed': payinCompleted,
  'payout.completed': envelope('payout.completed', 'payout', x.payout, x.payout.updated_at),
  'payout.failed': envelope('payout.failed', 'payout', x.payoutFailed, x.payoutFailed.updated_at),
  'transfer.completed': envelope('transfer.completed', 'transfer', x.transfer, x.transfer.updated_at),
  'refund.completed': envelope('refund.completed', 'refund', x.refund as typeof x.refund & { id: string; created_at: string }, x.refund.updated_at),
  'webhook.test': envelope('webhook.test', 'test', testObject, testObject.created_at),
};
