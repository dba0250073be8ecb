// Wallets: GET /wallets (merchant) and sandbox funding by the operator (CONTRACT.md §2, §4).
import type { ApiModule, Ctx } from '../module.ts';
import { body, errors, idParam, json, listOf, listParams, ref } from '../openapi/common.ts';
import { topUp } from '../../commands/wallets.ts';
import { listRequest } from '../../projections/pagination.ts';
import { balancesAsOf, settledBefore, walletTransactions } from '../../projections/wallet-history.ts';
import { awaitEverythingCommitted, requireEverythingCommitted } from '../middleware/read-your-writes.ts';
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

const asOfParam = {
  name: 'as_of', in: 'query', schema: { type: 'string', format: 'date-time' },
  description: 'The balances as they stood at this instant: after every movement before it (at < as_of). Not in the future (400).',
};

/** The wallet's movements: the list parameters every list shares, less the filters a movement has not. */
const transactionParams = [
  { name: 'currency', in: 'path', required: true, schema: ref('Currency'), 'x-malformed': 'bad_request' },
  ...listParams.filter((p) => p.name !== 'status' && p.name !== 'customer_id'),
];

const schemas = {
  WalletTransaction: {
    type: 'object',
    required: ['id', 'at', 'movement', 'reference', 'available_delta', 'reserved_delta', 'fee', 'available_balance', 'reserved_balance'],
    properties: {
      id: { ...ref('Uuid'), description: 'The movement (the ledger event) id' },
      at: { ...ref('DateTime'), description: 'When the ledger recorded it; a wallet\'s movements never go back in time' },
      movement: { type: 'string', description: 'top_up, hold, post (paid out), release, credit (collected), or a kind added later: treat unknown ones generically' },
      reference: {
        type: 'object', required: ['type', 'id'],
        properties: { type: { type: 'string', description: 'What caused it: top_up, payin, payout, transfer, refund…' }, id: { type: 'string' } },
      },
      available_delta: { type: 'string', pattern: '^-?[0-9]+$', description: 'Signed change of available (whole francs)' },
      reserved_delta: { type: 'string', pattern: '^-?[0-9]+$', description: 'Signed change of reserved (whole francs)' },
      fee: { type: 'string', pattern: '^[0-9]+$', description: 'The platform\'s fee taken in this movement (0 when none)' },
      available_balance: { type: 'string', pattern: '^[0-9]+$', description: 'available right after it' },
      reserved_balance: { type: 'string', pattern: '^[0-9]+$', description: 'reserved right after it' },
    },
  },
};

const walletList = {
  type: 'object', required: ['data'],
  properties: {
    data: { type: 'array', items: ref('Wallet') },
    as_of: { ...ref('DateTime'), description: 'With as_of: the instant asked (updated_at is then the time of the last movement before it)' },
    settled: { type: 'boolean', description: 'With as_of: no movement can come before the instant any more (each wallet moved after it, or it is more than a minute old), so the answer never changes' },
  },
};

/**
 * The balances as of an instant (CONTRACT.md §13): each currency's as its last movement before it
 * left them (projections/wallet-history.ts, the statements' own opening), after the read models
 * caught up with every commit before the request.
 */
async function walletsAsOf(ctx: Ctx, raw: string) {
  const { knex, clock } = ctx.services;
  const asOf = new Date(raw);
  const now = clock.now();
  if (asOf.getTime() > now.getTime()) {
    throw new DomainError('bad_request', 'as_of is in the future', [{ field: 'query.as_of', message: 'must not be in the future' }]);
  }
  const merchant = (await knex('merchants').where({ id: ctx.merchantId }).first('created_at')) as { created_at: Date | string };
  const opened = new Date(merchant.created_at);
  // Before the merchant existed nothing can ever be in a wallet.
  if (asOf.getTime() < opened.getTime()) return { data: [], as_of: asOf.toISOString(), settled: true };
  await requireEverythingCommitted(ctx.services);
  const data = [];
  let settled = true;
  for (const currency of CURRENCIES) {
    const b = await balancesAsOf(knex, ctx.merchantId, currency, asOf);
    settled &&= await settledBefore(knex, ctx.merchantId, currency, asOf, now);
    data.push({ currency, available: b.available, reserved: b.reserved, updated_at: b.since ?? opened.toISOString() });
  }
  return { data, as_of: asOf.toISOString(), settled };
}

export const walletsModule: ApiModule = {
  schemas,
  paths: {
    '/wallets': {
      get: {
        'x-auth': 'merchant', tags: ['Wallets'], 'x-scope': 'wallets:read', operationId: 'listWallets',
        description: 'One entry per currency (XAF, XOF): available is spendable; reserved is held for payouts and transfers in flight. '
          + 'With `as_of`, the balances as they stood then, from the ledger (the opening balances of a statement from that instant); '
          + 'before the account was opened, no wallets (`data: []`).',
        summary: 'Balances per currency: available (spendable) and reserved (held for payouts and transfers in flight), now or as of an instant',
        parameters: [asOfParam],
        responses: { 200: json(walletList), 400: errors[400], 401: errors[401] },
      },
    },
    '/wallets/{currency}/transactions': {
      get: {
        'x-auth': 'merchant', tags: ['Wallets'], 'x-scope': 'wallets:read', operationId: 'listWalletTransactions',
        summary: 'A wallet\'s movements, newest first, each with its effect and the balances after it',
        description: 'Every movement of your wallet in that currency (XAF or XOF): top-ups, holds, payouts paid, releases, collections. '
          + 'created_from and created_to filter on `at` (inclusive). A wallet nothing has moved yet answers an empty list.',
        parameters: transactionParams,
        responses: { 200: json(listOf(ref('WalletTransaction'))), 400: errors[400], 401: errors[401] },
      },
    },
    '/admin/merchants/{merchant_id}/wallets/{currency}/top-ups': {
      post: {
        'x-auth': 'admin', tags: ['Operator'], operationId: 'adminTopUpWallet',
        'x-audit': { action: 'wallet.topped_up', target: { type: 'top_up', id: 'answer:id' }, merchant: 'path:merchant_id' },
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
      if (ctx.query.as_of !== undefined) return { status: 200, body: await walletsAsOf(ctx, String(ctx.query.as_of)) };
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
    listWalletTransactions: async (ctx: Ctx) => {
      await awaitEverythingCommitted(ctx.services);
      const page = await walletTransactions(ctx.services.knex, ctx.merchantId, ctx.params.currency!, listRequest(ctx.query));
      return { status: 200, body: page };
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
