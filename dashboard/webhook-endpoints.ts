// The Webhooks page's endpoint actions (CONTRACT.md §11): the same commands as the merchant API's
// /webhook-endpoints (commands/webhook-endpoints.ts), with the actor `dashboard:<user id>`.
import type { ApiServices } from '../api/services.ts';
import * as C from '../commands/webhook-endpoints.ts';
import { ALL_EVENTS, type EndpointStatus } from '../domain/webhook-endpoints.ts';
import { Refusal } from './refusal.ts';
import type { Session } from './session.ts';
import { meta } from './actions.ts';

/** The staging windows the page offers (pages/webhook-endpoints.ts; the API takes any number of seconds up to a week). */
const ACTIVATE_CHOICES = [86_400, 3600, 0];

export interface EndpointForm { url: string; events: string[]; description: string }

/** Checked boxes → a filter: "every event" when it is ticked or nothing is; unknown names are refused by the command. */
export const filterOf = (events: string[]) => (events.length === 0 || events.includes(ALL_EVENTS) ? [ALL_EVENTS] : events);

function checkedForm(f: EndpointForm): EndpointForm {
  const url = f.url.trim();
  if (url === '' || url.length > 2000) throw new Refusal('dash.error.url_length');
  if (f.description.length > 500) throw new Refusal('dash.error.description_length');
  return { url, events: filterOf(f.events), description: f.description.trim() };
}

export async function addEndpoint(s: ApiServices, session: Session, requestId: string, endpointId: string, form: EndpointForm) {
  const f = checkedForm(form);
  const url = await C.checkedWebhookUrl(s, f.url);
  return C.createEndpoint(s, session.merchantId, endpointId, { url, enabledEvents: f.events, description: f.description || null }, meta(session, requestId));
}

export async function editEndpoint(s: ApiServices, session: Session, requestId: string, endpointId: string, form: EndpointForm) {
  const f = checkedForm(form);
  const url = await C.checkedWebhookUrl(s, f.url);
  return C.updateEndpoint(s, session.merchantId, { endpointId, url, enabledEvents: f.events, description: f.description || null }, meta(session, requestId));
}

export async function setEndpointStatus(s: ApiServices, session: Session, requestId: string, endpointId: string, status: EndpointStatus) {
  return C.updateEndpoint(s, session.merchantId, { endpointId, status }, meta(session, requestId));
}

export async function removeEndpoint(s: ApiServices, session: Session, requestId: string, endpointId: string) {
  await C.deleteEndpoint(s, session.merchantId, endpointId, meta(session, requestId));
}

export async function rotateEndpoint(s: ApiServices, session: Session, requestId: string, endpointId: string, activateAfterSeconds: number) {
  if (!ACTIVATE_CHOICES.includes(activateAfterSeconds)) throw new Refusal('dash.error.activate_choice');
  return C.rotateEndpointSecret(s, session.merchantId, endpointId, activateAfterSeconds, meta(session, requestId));
}
