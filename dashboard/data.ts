// What the dashboard reads, always for one merchant (the session's). Details, histories and balances
// come from the merchant API's own handlers, called in-process with the session's merchant id, so a
// page shows exactly what the API would answer and is scoped exactly as the API is; lists use the
// same read-model tables, stored views (`body`) and keyset pagination as the API's lists, plus a
// search the API does not have.
import type { Knex } from 'knex';
import type { ApiServices } from '../api/services.ts';
import type { Ctx, Handler } from '../api/module.ts';
import { DomainError } from '../domain/errors.ts';
import { paginate, type Page } from '../projections/pagination.ts';
import { payinsModule, PAYMENT_STATUSES } from '../api/routes/payins.ts';
import { payoutsModule } from '../api/routes/payouts.ts';
import { transfersModule } from '../api/routes/transfers.ts';
import { historyModule } from '../api/routes/history.ts';
import { walletsModule } from '../api/routes/wallets.ts';
import { operatorsModule } from '../api/routes/operators.ts';
import type { OperatorStatus } from './pages/operator-notice.ts';
import { keyView } from '../api/routes/admin-merchants.ts';
import * as M from '../domain/merchant.ts';
import { streams } from '../commands/streams.ts';
import { attemptsOf, eventView, readEvent, type WebhookEventRow, type EventView } from '../projections/webhook-events.ts';
import { endpointsOf } from '../commands/webhook-endpoints.ts';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const PAGE_SIZE = 25;

export type Kind = 'payins' | 'payouts' | 'transfers';

interface KindInfo {
  table: string;
  singular: string;
  statuses: string[];
  get: Handler;
  history: Handler;
  param: string;
  /** Columns of the stored view that hold provider references (searched as "external reference"). */
  references: string[];
}

export const KINDS: Record<Kind, KindInfo> = {
  payins: {
    table: 'payins', singular: 'Payin', statuses: PAYMENT_STATUSES, param: 'payin_id',
    get: payinsModule.handlers.getPayin!, history: historyModule.handlers.getPayinEvents!, references: ['provider_reference'],
  },
  payouts: {
    table: 'payouts', singular: 'Payout', statuses: PAYMENT_STATUSES, param: 'payout_id',
    get: payoutsModule.handlers.getPayout!, history: historyModule.handlers.getPayoutEvents!, references: ['provider_reference'],
  },
  transfers: {
    table: 'transfers', singular: 'Transfer', statuses: ['pending', 'collecting', 'disbursing', 'completed', 'failed'], param: 'transfer_id',
    get: transfersModule.handlers.getTransfer!, history: historyModule.handlers.getTransferEvents!,
    references: ['collection_reference', 'disbursement_reference'],
  },
};

/**
 * A merchant-API context for the session's merchant (what authentication would have produced);
 * `headers`: what a handler reads of the request (the Host a payment link's URL is made under).
 */
export function ctxFor(
  s: ApiServices, merchantId: string, requestId: string, params: Record<string, string> = {}, query: Record<string, unknown> = {}, headers: Record<string, string> = {},
): Ctx {
  return { services: s, log: s.log.child({ request_id: requestId }), requestId, merchantId, body: {}, params, query, headers, clientIp: '' };
}

/** A handler's 200 body, or undefined for its 404 (another merchant's id answers exactly like no id). */
export async function call(handler: Handler, ctx: Ctx): Promise<any> {
  try {
    const reply = await handler(ctx);
    return 'body' in reply ? reply.body : undefined;
  } catch (err) {
    if (err instanceof DomainError && err.code === 'not_found') return undefined;
    throw err;
  }
}

export interface ListFilter {
  status?: string | undefined;
  /** Inclusive ISO instants. */
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
  /** An id, a provider reference or a metadata value (the merchant's own reference). */
  search?: string | undefined;
  cursor?: string | undefined;
}

export async function listOf(s: ApiServices, merchantId: string, kind: Kind, f: ListFilter): Promise<Page<Record<string, any>>> {
  const k = KINDS[kind];
  const knex = s.knex;
  const q = knex(k.table).select('body').where({ merchant_id: merchantId });
  if (f.status) q.where({ status: f.status });
  if (f.search) {
    const term = f.search;
    q.where((w: Knex.QueryBuilder) => {
      if (UUID.test(term)) w.orWhere('id', term.toLowerCase());
      for (const col of k.references) w.orWhereRaw('body->>? = ?', [col, term]);
      w.orWhereRaw("EXISTS (SELECT 1 FROM jsonb_each_text(COALESCE(body->'metadata', '{}'::jsonb)) AS md WHERE md.value = ?)", [term]);
    });
  }
  return paginate(knex, q, { limit: PAGE_SIZE, cursor: f.cursor, createdFrom: f.createdFrom, createdTo: f.createdTo }, (r: { body: Record<string, any> }) => r.body);
}

/** The display names of the merchant's customers among `ids` (a person's first and last name, or a business name). */
export async function customerNamesOf(s: ApiServices, merchantId: string, ids: unknown[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => typeof id === 'string' && UUID.test(id)))];
  if (wanted.length === 0) return new Map();
  const rows: Array<{ id: string; first_name: string | null; last_name: string | null; business_name: string | null }> = await s.knex('customers')
    .where({ merchant_id: merchantId }).whereIn('id', wanted).select('id', 'first_name', 'last_name', 'business_name');
  return new Map(rows.map((r) => [r.id, r.business_name || [r.first_name, r.last_name].filter(Boolean).join(' ')]));
}

export async function readResource(s: ApiServices, merchantId: string, requestId: string, kind: Kind, id: string): Promise<Record<string, any> | undefined> {
  if (!UUID.test(id)) return undefined;
  return call(KINDS[kind].get, ctxFor(s, merchantId, requestId, { [KINDS[kind].param]: id }));
}

/** The resource's recorded events, oldest first (secrets redacted by the history renderer). */
export async function historyOf(s: ApiServices, merchantId: string, requestId: string, kind: Kind, id: string): Promise<Array<Record<string, any>>> {
  const body = await call(KINDS[kind].history, ctxFor(s, merchantId, requestId, { [KINDS[kind].param]: id }, { from_version: 1, limit: 1000 }));
  return body?.data ?? [];
}

export async function walletsOf(s: ApiServices, merchantId: string, requestId: string): Promise<Array<{ currency: string; available: string; reserved: string; updated_at: string }>> {
  const body = await call(walletsModule.handlers.listWallets!, ctxFor(s, merchantId, requestId));
  return body?.data ?? [];
}

// ---- keys and webhook configuration: the merchant aggregate, as the operator API reads it ----

export async function merchantState(s: ApiServices, merchantId: string): Promise<M.MerchantState> {
  return (await s.aggregates.load(streams.merchant(merchantId), M.merchantDecider)).state;
}

export type KeyView = ReturnType<typeof keyView>;

export async function keysOf(s: ApiServices, merchantId: string): Promise<KeyView[]> {
  const state = await merchantState(s, merchantId);
  const now = s.clock.now();
  return Object.values(state.keys).sort((a, b) => b.createdAt.localeCompare(a.createdAt)).map((k) => keyView(k, now));
}

export async function keyOf(s: ApiServices, merchantId: string, keyId: string): Promise<KeyView | undefined> {
  if (!UUID.test(keyId)) return undefined;
  return (await keysOf(s, merchantId)).find((k) => k.id === keyId);
}

/** The URL of the merchant's first enabled webhook endpoint (CONTRACT.md §11), or null when none is. */
export async function webhookUrlOf(s: ApiServices, merchantId: string): Promise<string | null> {
  return (await endpointsOf(s, merchantId)).find((e) => e.status === 'enabled')?.url ?? null;
}

// ---- webhook events (the data of GET /events and GET /events/{id}) ----

export const DELIVERY_FILTERS = ['pending', 'delivered', 'failed', 'not_configured'];
export const EVENT_TYPES = ['payin', 'payout', 'transfer', 'refund', 'test'];

export async function eventsOf(s: ApiServices, merchantId: string, f: { deliveryStatus?: string | undefined; type?: string | undefined; resourceId?: string | undefined; cursor?: string | undefined; limit?: number }): Promise<Page<EventView>> {
  const knex = s.knex;
  const q = knex('webhook_events').where({ merchant_id: merchantId }).select('*');
  if (f.deliveryStatus) q.where({ delivery_status: f.deliveryStatus });
  if (f.type) q.where({ resource_type: f.type });
  if (f.resourceId && UUID.test(f.resourceId)) q.where({ resource_id: f.resourceId });
  const page = await paginate<WebhookEventRow, WebhookEventRow>(knex, q, { limit: f.limit ?? PAGE_SIZE, cursor: f.cursor }, (r) => r);
  const attempts = await attemptsOf(knex, page.data.map((r) => r.id));
  return { ...page, data: page.data.map((r) => eventView(r, attempts)) };
}

export async function eventOf(s: ApiServices, merchantId: string, id: string): Promise<EventView | undefined> {
  if (!UUID.test(id)) return undefined;
  return readEvent(s.knex, merchantId, id);
}

/** For the getting-started checklist. */
export async function progressOf(s: ApiServices, merchantId: string) {
  const [keys, url, delivered, payments] = await Promise.all([
    keysOf(s, merchantId),
    webhookUrlOf(s, merchantId),
    // The step is "send a test event and see it delivered": a delivered payment event does not tick it.
    s.knex('webhook_events').where({ merchant_id: merchantId, resource_type: 'test', delivery_status: 'delivered' }).first('id'),
    Promise.all(['payins', 'payouts', 'transfers'].map((t) => s.knex(t).where({ merchant_id: merchantId }).first('id'))),
  ]);
  return {
    activeKey: keys.some((k) => k.status === 'active'),
    webhookUrl: url,
    deliveredTestEvent: delivered !== undefined,
    firstPayment: payments.some((p) => p !== undefined),
  };
}

/** The merchant's operators with their availability per flow, as GET /operators answers (CONTRACT §14). */
export async function operatorsOf(s: ApiServices, merchantId: string, requestId: string): Promise<OperatorStatus[]> {
  return (await call(operatorsModule.handlers.listOperators!, ctxFor(s, merchantId, requestId))).data;
}
