// Signed in: the merchant's payins, payouts and transfers: each kind's list (filtered by status,
// creation day and search) and one item with its history and webhook events.
import type { Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { can } from '../permissions.ts';
import { Refusal } from '../refusal.ts';
import * as D from '../data.ts';
import { listPage } from '../pages/money.ts';
import { detailPage } from '../pages/detail.ts';
import { done, locals, query, requestId, send } from '../http.ts';
import { payinRefunds } from './refunds.ts';
import { calendarDayStart } from '../../domain/dates.ts';

/** YYYY-MM-DD from a date input as an inclusive bound (start or end of that UTC day); null for a day that does not exist. */
function dayBound(v: string | undefined, end: boolean): string | undefined | null {
  if (v === undefined) return undefined;
  if (calendarDayStart(v) === undefined) return null;
  return end ? `${v}T23:59:59.999Z` : `${v}T00:00:00.000Z`;
}

const NOT_FOUND = { payins: 'dash.error.payin_not_found', payouts: 'dash.error.payout_not_found', transfers: 'dash.error.transfer_not_found' } as const;

export function addMoneyRoutes(r: Router, s: ApiServices): void {
  for (const kind of ['payins', 'payouts', 'transfers'] as const) {
    r.get(`/${kind}`, can('money:read'), async (req, res) => {
      const { session } = locals(res);
      const form = { status: query(req, 'status'), from: query(req, 'from'), to: query(req, 'to'), q: query(req, 'q')?.trim().slice(0, 200) };
      const from = dayBound(form.from, false);
      const to = dayBound(form.to, true);
      const status = form.status && D.KINDS[kind].statuses.includes(form.status) ? form.status : undefined;
      if (from === null || to === null) {
        return send(res, 400, listPage(locals(res), kind, [], null, form, { error: locals(res).t('dash.error.dates') }));
      }
      const list = await D.listOf(s, session.merchantId, kind, { status, createdFrom: from, createdTo: to, search: form.q || undefined, cursor: query(req, 'cursor') });
      const names = await D.customerNamesOf(s, session.merchantId, list.data.map((r) => r.customer_id));
      send(res, 200, listPage(locals(res), kind, list.data, list.next_cursor, { ...form, status }, { names }));
    });

    r.get(`/${kind}/:id`, can('money:read'), async (req, res) => {
      const { session } = locals(res);
      const id = String(req.params.id);
      const item = await D.readResource(s, session.merchantId, requestId(req), kind, id);
      if (!item) throw new Refusal(NOT_FOUND[kind], {}, 'not_found');
      const [history, hooks, names] = await Promise.all([
        D.historyOf(s, session.merchantId, requestId(req), kind, id),
        D.eventsOf(s, session.merchantId, { resourceId: id, limit: 50 }),
        D.customerNamesOf(s, session.merchantId, [item.customer_id]),
      ]);
      const refunds = kind === 'payins' ? await payinRefunds(s, locals(res), item) : undefined;
      send(res, 200, detailPage(locals(res), kind, item, history, hooks.data, names.get(item.customer_id), { refunds, info: done(req, res) }));
    });
  }
}
