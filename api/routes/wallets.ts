// Wallets: GET /wallets (merchant) and sandbox funding by the operator (CONTRACT.md §2, §4).
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, idParam, json, ref } from '../openapi/common.ts';
import { topUp } from '../../commands/wallets.ts';
import { validKey } from '../../commands/idempotency.ts';
import { DomainError } from '../../domain/errors.ts';
import type { Currency } from '../../domain/catalogue.ts';

const CURRENCIES: Currency[] = ['XAF', 'XOF'];

interface WalletRow { currency: string; available: string; reserved: string; updated_at: Date | string }

/**
 * The operator's Idempotency-Key on a top-up: optional (a call without one is a new top-up, as
 * before), and not the `x-idempotent` claim of merchant operations: the key names the top-up's own
 * stream (commands/wallets.ts), which makes it happen once on every event store.
 */
const topUpKeyHeader = {
  name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 },
  description: 'Names this top-up for the merchant: a retry with the same key and body answers the same entry and credits once.',
};

function topUpKey(ctx: Ctx): string | undefined {
  const key = ctx.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !validKey(key)) {
    throw new DomainError('bad_request', 'Invalid Idempotency-Key', [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable characters' }]);
  }
  return key;
}

export const walletsModule: ApiModule = {
  paths: {
    '/wallets': {
      get: {
        'x-auth': 'merchant', tags: ['Wallets'], operationId: 'listWallets',
        description: 'One entry per currency (XAF, XOF): available is spendable; reserved is held for payouts and transfers in flight.',
        summary: 'Balances per currency: available (spendable) and reserved (held for payouts and transfers in flight)',
        responses: { 200: json({ type: 'object', required: ['data'], properties: { data: { type: 'array', items: ref('Wallet') } } }), 401: errors[401] },
      },
    },
    '/admin/merchants/{merchant_id}/wallets/{currency}/top-ups': {
      post: {
        'x-auth': 'admin', tags: ['Operator'], operationId: 'adminTopUpWallet',
        description: 'Sandbox funding: credits the merchant\'s wallet in that currency (XAF or XOF) and answers the ledger entry. '
          + 'With an Idempotency-Key (scoped to the merchant, kept for ever) a retry answers the same entry (with `_meta.idempotency_replayed: true`) '
          + 'and credits once; the same key with another currency or amount is 409 idempotency_conflict. Without one, each call is a new top-up.',
        summary: 'Fund a merchant wallet (sandbox): a ledger entry crediting available',
        parameters: [idParam('merchant_id'), { name: 'currency', in: 'path', required: true, schema: ref('Currency'), 'x-malformed': 'bad_request' }, topUpKeyHeader],
        requestBody: body({
          type: 'object', additionalProperties: false, required: ['amount'],
          properties: { amount: { ...ref('Amount'), description: 'Whole francs; 100 to 1,000,000 per top-up' } },
        }),
        responses: { 201: json(ref('LedgerEntry'), 'Created'), 400: errors[400], 401: errors[401], 404: errors[404], 409: errors[409] },
      },
    },
  },
  handlers: {
    listWallets: async (ctx: Ctx) => {
      const { knex } = ctx.services;
      const rows = (await knex('wallets').where({ merchant_id: ctx.merchantId })
        .select('currency', knex.raw('available::text AS available'), knex.raw('reserved::text AS reserved'), 'updated_at')) as WalletRow[];
      const merchant = (await knex('merchants').where({ id: ctx.merchantId }).first('created_at')) as { created_at: Date | string };
      const data = CURRENCIES.map((currency) => {
        const r = rows.find((w) => w.currency === currency);
        // A wallet nothing has moved yet is empty since the account was opened.
        return r
          ? { currency, available: r.available, reserved: r.reserved, updated_at: new Date(r.updated_at).toISOString() }
          : { currency, available: '0', reserved: '0', updated_at: new Date(merchant.created_at).toISOString() };
      });
      return { status: 200, body: { data } };
    },
    adminTopUpWallet: async (ctx: Ctx) => {
      const key = topUpKey(ctx);
      const r = await topUp(ctx.services, {
        merchantId: ctx.params.merchant_id!, currency: ctx.params.currency!, amount: ctx.body.amount, idempotencyKey: key,
      }, { requestId: ctx.requestId, actor: 'operator' });
      const entry = { id: r.entryId, merchant_id: ctx.params.merchant_id, currency: r.currency, amount: r.amount.toString(), type: 'top_up', created_at: r.at };
      return {
        status: 201,
        body: key === undefined ? entry : { ...entry, _meta: { idempotency_key: key, idempotency_replayed: r.replayed } },
      };
    },
  },
};
