// Wallets: GET /wallets (merchant) and sandbox funding by the operator (CONTRACT.md §2, §4).
import { randomUUID } from 'node:crypto';
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, idParam, json, ref } from '../openapi/common.ts';
import { topUp } from '../../commands/wallets.ts';
import type { Currency } from '../../domain/catalogue.ts';

const CURRENCIES: Currency[] = ['XAF', 'XOF'];

interface WalletRow { currency: string; available: string; reserved: string; updated_at: Date | string }

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
        description: 'Sandbox funding: credits the merchant\'s wallet in that currency (XAF or XOF) and answers the ledger entry.',
        summary: 'Fund a merchant wallet (sandbox): a ledger entry crediting available',
        parameters: [idParam('merchant_id'), { name: 'currency', in: 'path', required: true, schema: ref('Currency'), 'x-malformed': 'bad_request' }],
        requestBody: body({
          type: 'object', additionalProperties: false, required: ['amount'],
          properties: { amount: { ...ref('Amount'), description: 'Whole francs; 100 to 1,000,000 per top-up' } },
        }),
        responses: { 201: json(ref('LedgerEntry'), 'Created'), 400: errors[400], 401: errors[401], 404: errors[404] },
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
      const r = await topUp(ctx.services, {
        entryId: randomUUID(), merchantId: ctx.params.merchant_id!, currency: ctx.params.currency!, amount: ctx.body.amount,
      }, { requestId: ctx.requestId, actor: 'operator' });
      return {
        status: 201,
        body: { id: r.entryId, merchant_id: ctx.params.merchant_id, currency: ctx.params.currency, amount: r.amount.toString(), type: 'top_up', created_at: r.at },
      };
    },
  },
};
