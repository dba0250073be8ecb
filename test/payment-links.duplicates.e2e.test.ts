// A link's payments ended at least once (CONTRACT §16): the service runs on a bus that hands every
// message to each consumer two or three times, shuffled (helpers/duplicating-bus.ts), so the
// payment-link-outcomes worker sees each payin.completed and payin.failed several times. Each payin
// still ends once on its link, and payments_count counts completed payins exactly.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestApp, caughtUp } from './helpers/app.ts';
import { DuplicatingBus } from './helpers/duplicating-bus.ts';
import { settled, until } from './helpers/money.ts';
import { MemoryBus } from '../infra/bus/memory.ts';
import { payThroughLink, createPaymentLink } from '../commands/payment-links.ts';
import { streams } from '../commands/streams.ts';

const bus = new DuplicatingBus(new MemoryBus(), Number(process.env.DUP_SEED ?? 20261127));
const h = await startTestApp({ bus });
t.teardown(async () => {
  await bus.drain();
  await h.stop();
});
const s = h.app.services;
const meta = { requestId: 'test', actor: 'test' };

t.test('duplicated payin outcomes end each payin once on its link', async (t) => {
  const m = await h.newMerchant();
  const linkId = randomUUID();
  await createPaymentLink(s, {
    linkId, merchantId: m.merchantId, amount: '5000', currency: 'XAF', description: 'Unlimited', customerId: null,
    expiresAt: null, maxPayments: null, metadata: {},
  }, meta);
  const phones = ['+237670000001', '+237670000099', '+237670000002', '+237670000003'];
  const payins = await Promise.all(phones.map((phone) => payThroughLink(s, {
    linkId, attemptId: randomUUID(), countryCode: 'CM', operatorCode: 'CM_MTN_MOMO', phone, name: 'Awa Diop', otp: undefined,
  }, meta)));
  for (const p of payins) await settled(h, m, 'payins', p.payinId);
  const link = await until('payments_count 3', async () => {
    const l = (await h.as(m, 'GET', `/payment-links/${linkId}`)).body;
    return l.payments_count === 3 ? l : undefined;
  });
  t.equal(link.status, 'active', 'unlimited: still active');
  await caughtUp(h);
  t.ok(bus.stats.duplicates > 0, 'messages were duplicated');
  const events = await s.store.readStream(streams.paymentLink(linkId), 1);
  const ended = events.filter((e) => e.type === 'payment_link.payment_ended');
  t.equal(events.filter((e) => e.type === 'payment_link.payment_started').length, 4, 'one place taken per payin');
  t.equal(ended.length, 4, 'each payin ended once');
  t.same(ended.map((e) => e.data.outcome).sort(), ['completed', 'completed', 'completed', 'failed']);
  t.equal((await h.as(m, 'GET', `/payment-links/${linkId}`)).body.payments_count, 3, 'payments_count unchanged after every copy');
});
