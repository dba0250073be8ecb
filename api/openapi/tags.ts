// The document's global tags, in reading order: the merchant API first (what an integrator needs,
// in the order money moves), then the operator API, then the service's own routes.
export const tags = [
  { name: 'Customers', description: 'The people and businesses a merchant collects from and pays (merchant API).' },
  { name: 'KYC', description: "A customer's identity documents and their review (merchant API)." },
  { name: 'Catalogue', description: 'The operators enabled for the merchant, with flows, limits and availability (merchant API).' },
  { name: 'Quotes', description: 'Lock fees, FX and amounts before any payment: every payin, payout and transfer starts from a quote (merchant API).' },
  { name: 'Payins', description: 'Collections from a payer into the merchant wallet (merchant API).' },
  { name: 'Payouts', description: "Disbursements to a recipient from the merchant's wallet (merchant API)." },
  { name: 'Transfers', description: 'Two legs: collect from a payer, then pay a recipient (merchant API).' },
  { name: 'Wallets', description: 'Balances per currency: available and reserved (merchant API).' },
  { name: 'Events', description: 'The webhook events sent to the merchant, with their delivery attempts (merchant API).' },
  { name: 'Webhooks', description: "What the service POSTs to the merchant's webhook URL, signed (see the webhooks section)." },
  { name: 'Operator', description: 'Merchants, API keys, webhook endpoint, routing, pricing, sandbox funding, dashboard users (operator API, Bearer token).' },
  { name: 'Operations', description: 'Event streams, the audit, statements, projections and metrics (operator API, Bearer token).' },
  { name: 'Providers', description: 'Outcomes pushed by payment providers (verified by their adapter).' },
  { name: 'System', description: 'Liveness, readiness and this document (public).' },
];
