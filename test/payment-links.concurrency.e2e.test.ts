// A limited link under many payers at once (CONTRACT §16: a link never ends with more completed
// payins than max_payments): twelve attempts at once on a link of two places create at most two
// payins, the others refused busy or closed; a failed payin frees its place for the next payer.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp } from './helpers/app.ts';
import { settled, until } from './helpers/money.ts';
import { payThroughLink, createPaymentLink } from '../commands/payment-links.ts';
import { DomainError } from '../domain/errors.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const s = h.app.services;
const meta = { requestId: 'test', actor: 'test' };

async function link(merchantId: string, maxPayments: number): Promise<string> {
  const linkId = randomUUID();
  await createPaymentLink(s, {
    linkId, merchantId, amount: '5000', currency: 'XAF', description: 'Two places', customerId: null, expiresAt: null, maxPayments, metadata: {},
  }, meta);
  return linkId;
}

const attempt = (linkId: string, phone: string) => payThroughLink(s, {
  linkId, attemptId: randomUUID(), countryCode: 'CM', operatorCode: 'CM_MTN_MOMO', phone, name: 'Awa Diop', otp: undefined,
}, meta);

t.test('twelve payers at once on a link of two places: at most two payins, the link completed at two', async (t) => {
  const m = await h.newMerchant();
  const linkId = await link(m.merchantId, 2);
  const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => attempt(linkId, `+2376700000${String(10 + i)}`)));
  const made = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.payinId] : []));
  for (const r of results) {
    if (r.status === 'rejected') t.ok(r.reason instanceof DomainError && ['payment_link_busy', 'payment_link_closed'].includes(r.reason.code), `refused busy or closed: ${String(r.reason)}`);
  }
  t.ok(made.length >= 1 && made.length <= 2, `one or two payins (${made.length})`);
  for (const id of made) await settled(h, m, 'payins', id);
  const l = await until('the link counts its payins', async () => {
    const b = (await h.as(m, 'GET', `/payment-links/${linkId}`)).body;
    return b.payments_count === made.length ? b : undefined;
  });
  const payins = (await h.as(m, 'GET', `/payins?payment_link_id=${linkId}&limit=100`)).body.data;
  t.equal(payins.length, made.length, 'no other payin of the link');
  if (made.length === 2) t.equal(l.status, 'completed');
});

t.test('a failed payin frees its place: the next payer pays and completes the link', async (t) => {
  const m = await h.newMerchant();
  const linkId = await link(m.merchantId, 1);
  const failing = await attempt(linkId, '+237670000099');
  await settled(h, m, 'payins', failing.payinId);
  await until('the place freed', async () => {
    try {
      return await attempt(linkId, '+237670000005');
    } catch (err) {
      if (err instanceof DomainError && err.code === 'payment_link_busy') return undefined;
      throw err;
    }
  }).then((p) => settled(h, m, 'payins', p.payinId));
  const l = await until('completed', async () => {
    const b = (await h.as(m, 'GET', `/payment-links/${linkId}`)).body;
    return b.status === 'completed' ? b : undefined;
  });
  t.equal(l.payments_count, 1);
  await t.rejects(attempt(linkId, '+237670000006'), { code: 'payment_link_closed' });
});
