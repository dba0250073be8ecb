// The payer's page in tests: a payment link made through the merchant command (as POST /payment-links
// makes it), and the page's form posted as a browser posts it (urlencoded, same-site, no redirect
// followed) with the attempt id read from the page.
import { randomUUID } from 'node:crypto';
import type { MerchantCreds, TestApp } from './app.ts';
import { createPaymentLink } from '../../commands/payment-links.ts';

export interface LinkOptions {
  amount?: string;
  currency?: 'XAF' | 'XOF';
  description?: string;
  customerId?: string | null;
  maxPayments?: number | null;
  expiresAt?: string | null;
}

export async function newLink(h: TestApp, m: MerchantCreds, o: LinkOptions = {}): Promise<string> {
  const linkId = randomUUID();
  await createPaymentLink(h.app.services, {
    linkId, merchantId: m.merchantId, amount: o.amount ?? '5000', currency: o.currency ?? 'XAF', description: o.description ?? 'Order 42: two T-shirts',
    customerId: o.customerId ?? null, expiresAt: o.expiresAt ?? null, maxPayments: o.maxPayments === undefined ? 1 : o.maxPayments, metadata: {},
  }, { requestId: 'test', actor: `merchant:${m.merchantId}` });
  return linkId;
}

export interface PageAnswer {
  status: number;
  text: string;
  headers: Headers;
  location: string | null;
}

export async function get(h: TestApp, path: string, headers: Record<string, string> = {}): Promise<PageAnswer> {
  const res = await fetch(h.url + path, { headers, redirect: 'manual' });
  return { status: res.status, text: await res.text(), headers: res.headers, location: res.headers.get('location') };
}

/** The attempt id the page's form carries. */
export function attemptOf(html: string): string {
  const m = /name="attempt_id" value="([0-9a-f-]{36})"/.exec(html);
  if (!m) throw new Error('no attempt id in the page');
  return m[1]!;
}

export async function post(h: TestApp, path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<PageAnswer> {
  const res = await fetch(h.url + path, {
    method: 'POST', redirect: 'manual', body: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', origin: 'null', ...headers },
  });
  return { status: res.status, text: await res.text(), headers: res.headers, location: res.headers.get('location') };
}

/** A payer's fields for a Cameroonian MTN wallet (the sandbox completes the payin unless the phone ends in 99 or 98). */
export const cmPayer = (attemptId: string, phone = '+237 670 00 00 01', name = 'Awa Ngono') => ({
  attempt_id: attemptId, country_code: 'CM', operator_code: 'CM_MTN_MOMO', phone, name,
});
