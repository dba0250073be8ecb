// Signed in: the merchant's event log (filtered by delivery status and type), one event with its
// delivery attempts, and asking for a redelivery.
import type { Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { can } from '../permissions.ts';
import { Refusal } from '../refusal.ts';
import * as D from '../data.ts';
import * as A from '../actions.ts';
import { BASE } from '../pages/layout.ts';
import { eventPage, eventsPage } from '../pages/events.ts';
import { once } from '../form-once.ts';
import { done, locals, nonce, query, send } from '../http.ts';

export function addEventRoutes(r: Router, s: ApiServices): void {
  r.get('/events', can('events:read'), async (req, res) => {
    const { session } = locals(res);
    const f = {
      delivery_status: D.DELIVERY_FILTERS.includes(query(req, 'delivery_status') ?? '') ? query(req, 'delivery_status') : undefined,
      type: D.EVENT_TYPES.includes(query(req, 'type') ?? '') ? query(req, 'type') : undefined,
    };
    const events = await D.eventsOf(s, session.merchantId, { deliveryStatus: f.delivery_status, type: f.type, cursor: query(req, 'cursor') });
    send(res, 200, eventsPage(locals(res), events.data, events.next_cursor, f));
  });

  r.get('/events/:eventId', can('events:read'), async (req, res) => {
    const { session } = locals(res);
    const ev = await D.eventOf(s, session.merchantId, String(req.params.eventId));
    if (!ev) throw new Refusal('dash.error.event_not_found', {}, 'not_found');
    const url = await D.webhookUrlOf(s, session.merchantId);
    send(res, 200, eventPage(locals(res), ev, { info: done(req, res), canRedeliver: url !== null }));
  });

  r.post('/events/:eventId/redeliver', can('events:redeliver'), async (req, res) => {
    const { session } = locals(res);
    const ev = await D.eventOf(s, session.merchantId, String(req.params.eventId));
    if (!ev) throw new Refusal('dash.error.event_not_found', {}, 'not_found');
    const asked = await once(s, session, nonce(req), `${BASE}/events/${ev.id}/redeliver`,
      (redeliveryId) => A.redeliver(s, session, ev, redeliveryId), () => ({ action: 'redelivered', event_id: ev.id }));
    res.redirect(303, `${BASE}/events/${ev.id}?done=${asked.kind === 'first' ? 'redelivered' : 'redelivered_before'}`);
  });
}
