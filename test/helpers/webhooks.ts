// Webhook test helpers: a local receiver on 127.0.0.1 that records every delivery (raw body and
// headers) and answers as the test says, a test-only resource ("widget") whose events the tests
// append straight to the event store, and small waits.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { TestApp, MerchantCreds } from './app.ts';
import { unreachable, type DomainEvent } from '../../domain/decider.ts';
import { webhookResource } from '../../workers/webhooks/resources.ts';
import { JOB_KIND as DELIVERY_JOB } from '../../commands/webhook-redeliveries.ts';
import { waitUntil } from './wait.ts';

export interface Delivery {
  n: number;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What to answer to a delivery: a status (default 200), or never answer (`hang`). */
export type Answer = { status?: number; headers?: Record<string, string>; hang?: boolean };

export interface Receiver {
  url: string;
  port: number;
  deliveries: Delivery[];
  /** TCP connections accepted so far. */
  connections: number;
  answer: (d: Delivery) => Answer;
  /** Ends every connection held open now: a request left hanging fails at its sender at once. */
  cut(): void;
  close(): Promise<void>;
}

export async function startReceiver(answer: (d: Delivery) => Answer = () => ({ status: 200 })): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const r: Receiver = {
    url: '', port: 0, deliveries: [], connections: 0, answer,
    cut: () => {
      for (const s of sockets) s.destroy();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const d: Delivery = {
        n: r.deliveries.length + 1, method: req.method ?? '', path: req.url ?? '', headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'), at: Date.now(),
      };
      r.deliveries.push(d);
      const a = r.answer(d);
      if (a.hang) return; // never answers: the sender's time-out must end it
      res.writeHead(a.status ?? 200, { 'content-type': 'text/plain', ...(a.headers ?? {}) });
      res.end('ok');
    });
  });
  server.on('connection', (s: Socket) => {
    r.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  r.port = (server.address() as AddressInfo).port;
  r.url = `http://127.0.0.1:${r.port}/hooks`;
  return r;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `probe` answers something truthy (test/helpers/wait.ts: the bound is a safety net only). */
export function until<T>(probe: () => T | Promise<T>, what = 'condition', ms?: number): ReturnType<typeof waitUntil<T>> {
  return waitUntil(what, probe, ms);
}

// ---- a test-only resource: widgets (stream `widget-<id>`) ----

export type WidgetEvent =
  | DomainEvent<'widget.created', { merchant_id: string; customer_id: string | null; amount: string; otp: string | null; metadata: Record<string, string>; at: string }>
  | DomainEvent<'widget.step.completed', { step: string; at: string }>
  | DomainEvent<'widget.amended', { amount: string; at: string }>
  | DomainEvent<'widget.completed', { at: string }>
  | DomainEvent<'widget.failed', { reason: string; at: string }>;

export interface WidgetState {
  id: string;
  merchant_id: string;
  customer_id: string | null;
  status: 'pending' | 'completed' | 'failed';
  amount: string;
  otp: string | null;
  steps: string[];
  metadata: Record<string, string>;
  created_at: string;
  updated_at: string;
}

export const widgetResource = webhookResource<WidgetState, WidgetEvent>({
  streamPrefix: 'widget-',
  type: 'widget',
  events: ['widget.step.completed', 'widget.completed', 'widget.failed'],
  decider: {
    initialState: () => ({ id: '', merchant_id: '', customer_id: null, status: 'pending', amount: '0', otp: null, steps: [], metadata: {}, created_at: '', updated_at: '' }),
    evolve(s, e) {
      switch (e.type) {
        case 'widget.created':
          return { ...s, merchant_id: e.data.merchant_id, customer_id: e.data.customer_id, amount: e.data.amount, otp: e.data.otp, metadata: e.data.metadata, created_at: e.data.at, updated_at: e.data.at };
        case 'widget.step.completed':
          return { ...s, steps: [...s.steps, e.data.step], updated_at: e.data.at };
        case 'widget.amended':
          return { ...s, amount: e.data.amount, updated_at: e.data.at };
        case 'widget.completed':
          return { ...s, status: 'completed', updated_at: e.data.at };
        case 'widget.failed':
          return { ...s, status: 'failed', updated_at: e.data.at };
        default:
          return unreachable(e);
      }
    },
  },
  // Deliberately careless: it passes the OTP through, which the snapshot must still never carry.
  render: (s) => ({
    merchant_id: s.merchant_id, customer_id: s.customer_id, status: s.status, amount: s.amount, steps: s.steps,
    metadata: s.metadata, otp: s.otp, created_at: s.created_at, updated_at: s.updated_at,
  }),
});

const at = () => new Date().toISOString();

/** Appends events to a widget's stream (created first when `create` is given); returns the widget id. */
export async function appendWidget(h: TestApp, id: string, events: Array<WidgetEvent>): Promise<string> {
  await h.app.services.store.append([{ streamId: `widget-${id}`, expectedVersion: 'any', events: events.map((e) => ({ type: e.type, data: e.data as Record<string, unknown> })) }]);
  return id;
}

export function widgetCreated(m: MerchantCreds, extra: Partial<{ amount: string; otp: string; customer_id: string; metadata: Record<string, string> }> = {}): WidgetEvent {
  return {
    type: 'widget.created',
    data: {
      merchant_id: m.merchantId, customer_id: extra.customer_id ?? null, amount: extra.amount ?? '1000', otp: extra.otp ?? null,
      metadata: extra.metadata ?? {}, at: at(),
    },
  };
}

export const widgetCompleted = (): WidgetEvent => ({ type: 'widget.completed', data: { at: at() } });
export const widgetFailed = (reason = 'declined'): WidgetEvent => ({ type: 'widget.failed', data: { reason, at: at() } });
export const widgetStep = (step: string): WidgetEvent => ({ type: 'widget.step.completed', data: { step, at: at() } });
export const widgetAmended = (amount: string): WidgetEvent => ({ type: 'widget.amended', data: { amount, at: at() } });

/** A completed widget for the merchant; returns its id. */
export async function completedWidget(h: TestApp, m: MerchantCreds, extra: Parameters<typeof widgetCreated>[1] = {}): Promise<string> {
  const id = randomUUID();
  await appendWidget(h, id, [widgetCreated(m, extra), widgetCompleted()]);
  return id;
}

/** Configures the merchant's webhook URL; returns the signing secret. */
export async function configureWebhook(h: TestApp, m: MerchantCreds, url: string): Promise<string> {
  const r = await h.admin('PUT', `/admin/merchants/${m.merchantId}/webhook`, { url });
  if (r.status !== 200) throw new Error(`webhook configuration failed: ${r.status} ${r.text}`);
  return r.body.signing_secret as string;
}

/** The merchant's events about one resource (newest first). */
export async function eventsOf(h: TestApp, m: MerchantCreds, resourceId: string): Promise<any[]> {
  const r = await h.as(m, 'GET', `/events?resource_id=${resourceId}&limit=100`);
  if (r.status !== 200) throw new Error(`GET /events failed: ${r.status} ${r.text}`);
  return r.body.data;
}

/**
 * Waits until the app's webhook deliveries are idle: no delivery job due by the app's clock, none
 * running (a claimed job holds its lease until it has recorded its attempt and its next time). With
 * a manual clock this is "every attempt the clock made due has been made and recorded"; a job put
 * back for a later time (a retry, a busy endpoint's put-back) is not waited for.
 */
export function deliveriesIdle(h: TestApp, what = 'the due webhook attempts made and recorded'): Promise<unknown> {
  return waitUntil(what, async () => {
    const busy = await h.app.services.knex('jobs').where({ kind: DELIVERY_JOB })
      .andWhere((q) => q.where('due_at', '<=', h.clock.now()).orWhereNotNull('lease_id')).first('key');
    return busy === undefined;
  });
}

/** Waits until no delivery job of the webhook event is left: none of its deliveries can send anything more. */
export function noDeliveryJobsFor(h: TestApp, eventId: string): Promise<unknown> {
  return waitUntil(`no delivery job left for webhook event ${eventId}`, async () =>
    (await h.app.services.knex('jobs').where({ kind: DELIVERY_JOB }).andWhereLike('key', `%:${eventId}%`).first('key')) === undefined);
}
