// OpenAPI schemas of the money core's resources (quotes, payins, payouts, wallets, ledger entries).
import { listParams, ref } from '../openapi/common.ts';

const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });
const amount = { type: 'string', pattern: '^[0-9]+$', description: 'Whole francs, decimal string' };

/** A failed payment's, refund's or transfer leg's failure (CONTRACT §15): null unless failed. */
export const failureProperties = {
  failure_reason: { ...nullable(ref('FailureReason')), description: 'Why it failed (see FailureReason); null unless failed' },
  provider_failure: {
    ...nullable(ref('ProviderFailure')),
    description: 'The provider\'s own code and message; null unless failed, or when the provider is not known (some failures recorded before it was)',
  },
};

export const QuotePricing = {
  type: 'object',
  required: ['percent', 'fixed', 'percent_fee', 'fixed_fee', 'total_fee', 'fee_currency', 'fx_rate', 'fixed_side'],
  description: 'How the fee was computed: ceil(amount × percent / 100) + fixed, in whole francs, charged out of the amount.',
  properties: {
    percent: { type: 'string', description: 'The merchant\'s percent for this flow, e.g. "1.5"' },
    fixed: { type: 'string', description: 'The merchant\'s fixed fee for this flow' },
    percent_fee: amount,
    fixed_fee: amount,
    total_fee: amount,
    fee_currency: ref('Currency'),
    fx_rate: { type: 'string', description: 'Receive currency per send currency: XAF↔XOF is exactly "1"' },
    fixed_side: { type: 'string', enum: ['send', 'receive'], description: '`receive`: a transfer quoted from a fixed payout_amount' },
  },
};

/** What a Payin and a Payout both answer (each adds its own party: `source`, or `recipient`). */
const paymentProperties = {
  id: ref('Uuid'), merchant_id: ref('Uuid'), customer_id: ref('Uuid'), quote_id: ref('Uuid'),
  status: { type: 'string', enum: ['created', 'pending', 'completed', 'failed'] },
  provider_reference: { type: ['string', 'null'] }, ...failureProperties,
  history: { type: 'array', items: ref('StatusHistoryEntry') },
  send_amount: amount, send_currency: ref('Currency'), receive_amount: amount, receive_currency: ref('Currency'), total_fee: amount,
  country_code: ref('CountryCode'), operator_code: { type: 'string' }, rail_type: ref('RailType'),
  wallet_impact: ref('WalletImpact'), pricing: ref('QuotePricing'), metadata: ref('Metadata'),
  created_at: ref('DateTime'), updated_at: ref('DateTime'), completed_at: nullable(ref('DateTime')), failed_at: nullable(ref('DateTime')),
  _meta: ref('Meta'),
};

/** Every field but `_meta` (idempotent answers only): the views render each one, null when it has no value. */
const alwaysPresent = (properties: Record<string, unknown>) => Object.keys(properties).filter((k) => k !== '_meta');

export const moneySchemas = {
  QuotePricing,
  Quote: {
    type: 'object',
    description:
      'A lock of routing, fees, FX and amounts until expires_at. `status` is computed when read: `active`, `expired` once ' +
      'past expires_at, `consumed` once a payment used it (each quote backs at most one payment). For transfers, ' +
      'country_code/operator_code are the payer\'s, send_amount = payin_amount, receive_amount = payout_amount, and ' +
      'corridor_type is `domestic` (payer and recipient in one country) or `cross_border`. For payins and payouts the ' +
      'corridor and transfer fields are null (payer_operator_code is set on payins, recipient_operator_code on payouts).',
    required: [
      'id', 'merchant_id', 'customer_id', 'flow_type', 'status', 'expires_at', 'send_amount', 'send_currency', 'receive_amount',
      'receive_currency', 'total_fee', 'fx_rate', 'country_code', 'operator_code', 'rail_type', 'corridor_code', 'corridor_type',
      'payer_operator_code', 'recipient_operator_code', 'payin_amount', 'payin_currency', 'payout_amount', 'payout_currency',
      'pricing', 'wallet_impact', 'operator_availability', 'consumed_by', 'consumed_at', 'created_at',
    ],
    properties: {
      id: ref('Uuid'), merchant_id: ref('Uuid'), customer_id: nullable(ref('Uuid')),
      flow_type: { type: 'string', enum: ['payin', 'payout', 'transfer'] },
      status: { type: 'string', enum: ['active', 'expired', 'consumed'] },
      expires_at: ref('DateTime'),
      send_amount: amount, send_currency: ref('Currency'), receive_amount: amount, receive_currency: ref('Currency'),
      total_fee: amount, fx_rate: { type: 'string' },
      country_code: ref('CountryCode'), operator_code: { type: 'string' }, rail_type: ref('RailType'),
      corridor_code: { type: ['string', 'null'] }, corridor_type: { type: ['string', 'null'], enum: ['domestic', 'cross_border', null] },
      payer_operator_code: { type: ['string', 'null'] }, recipient_operator_code: { type: ['string', 'null'] },
      payin_amount: nullable(amount), payin_currency: nullable(ref('Currency')),
      payout_amount: nullable(amount), payout_currency: nullable(ref('Currency')),
      pricing: ref('QuotePricing'), wallet_impact: ref('WalletImpact'),
      operator_availability: {
        type: 'string', enum: ['operational', 'delayed'],
        description: 'The availability of the operators this quote uses when it was made (CONTRACT §14): `delayed` when one is ' +
          '(a transfer: the payer\'s operator for payins or the recipient\'s for payouts), else `operational`. A delayed ' +
          'operator accepts payments that may settle late; a closed one refuses the quote (400 operator_unavailable).',
      },
      consumed_by: nullable({ type: 'object', required: ['type', 'id'], properties: { type: { type: 'string', enum: ['payin', 'payout', 'transfer'] }, id: ref('Uuid') } }),
      consumed_at: nullable(ref('DateTime')),
      created_at: ref('DateTime'), _meta: ref('Meta'),
    },
  },
  Payin: {
    type: 'object',
    description:
      'A collection from a payer. Status: `created` → `pending` (create answers pending) → `completed` | `failed`; ' +
      'history lists each status with its reason (a failure\'s is its failure_reason, e.g. insufficient_funds; the ' +
      'provider\'s own code, e.g. INSUFFICIENT_FUNDS, is in provider_failure). ' +
      'The one-time password is never returned.',
    required: [...alwaysPresent(paymentProperties), 'source', 'refunded_amount', 'refund_ids', 'payment_link_id'],
    properties: {
      ...paymentProperties,
      source: ref('RailParty'),
      refunded_amount: { ...amount, description: 'The sum of its completed refunds ("0" when none): see Refunds' },
      refund_ids: { type: 'array', items: ref('Uuid'), description: 'Every refund of this payin, oldest first, whatever its status' },
      payment_link_id: { ...nullable(ref('Uuid')), description: 'The payment link the payer paid through (see Payment links); null for every other payin' },
    },
  },
  Payout: {
    type: 'object',
    description:
      'A disbursement to a recipient from the merchant\'s wallet. send_amount is held at create (available → reserved) and ' +
      'debited when the payout completes, or released if it fails; the recipient receives receive_amount = send_amount − ' +
      'total_fee. Status and history as for payins.',
    required: [...alwaysPresent(paymentProperties), 'recipient', 'payment_reason_text'],
    properties: {
      ...paymentProperties,
      recipient: ref('Recipient'), payment_reason_text: { type: 'string' },
    },
  },
  Wallet: {
    type: 'object',
    required: ['currency', 'available', 'reserved', 'updated_at'],
    properties: { currency: ref('Currency'), available: amount, reserved: amount, updated_at: ref('DateTime') },
  },
  LedgerEntry: {
    type: 'object',
    required: ['id', 'merchant_id', 'currency', 'amount', 'type', 'created_at'],
    properties: {
      id: ref('Uuid'), merchant_id: ref('Uuid'), currency: ref('Currency'), amount,
      type: { type: 'string', enum: ['top_up'] }, created_at: ref('DateTime'),
    },
  },
};

/** The shared list parameters with `status` narrowed to the resource's statuses. */
export function listParamsWith(statuses: string[]) {
  return listParams.map((p) => (p.name === 'status' ? { ...p, schema: { type: 'string', enum: statuses } } : p));
}
