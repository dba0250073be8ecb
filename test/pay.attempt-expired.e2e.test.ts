// A form whose attempt's quote expired (docs/PAYMENT-LINKS.md: "the page starts a new attempt"):
// a submit refused after its quote was made (a race on the link's last place) comes back with its
// attempt id; sent again after the quote's 15 minutes it is refused quote_expired, and with the
// same attempt id every later send was refused the same way. The form now comes back with a new
// attempt, which pays (no payin of the old attempt exists: its quote was never consumed).
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { attemptOf, cmPayer, get, newLink, post } from './helpers/pay.ts';
import { createQuote } from '../commands/quotes.ts';
import { attemptQuoteId } from '../commands/payment-link-attempts.ts';
import { ManualClock } from '../infra/clock.ts';

const clock = new ManualClock();
const h = await startTestApp({ clock });
t.teardown(() => h.stop());

t.test('the attempt\'s quote expired: the form again with a new attempt, which pays', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m, { amount: '5000', maxPayments: null });
  const attempt = attemptOf((await get(h, `/pay/${id}`)).text);
  await createQuote(h.app.services, {
    quoteId: attemptQuoteId(id, attempt, 'CM_MTN_MOMO'), merchantId: m.merchantId, customerId: null,
    request: { flow: 'payin', countryCode: 'CM', operatorCode: 'CM_MTN_MOMO', railType: 'mobile_money', sendAmount: '5000', sendCurrency: 'XAF' },
  }, { requestId: 'test', actor: 'test' });
  clock.advance((h.config.quoteTtlSeconds + 60) * 1000);
  const refused = await post(h, `/pay/${id}`, cmPayer(attempt));
  t.equal(refused.status, 400, 'refused: the quote expired');
  const next = attemptOf(refused.text);
  t.not(next, attempt, 'a new attempt in the form');
  const paid = await post(h, `/pay/${id}`, cmPayer(next));
  t.equal(paid.status, 303, `the new attempt pays (got ${paid.status})`);
  t.equal((await h.as(m, 'GET', `/payins?payment_link_id=${id}`)).body.data.length, 1);
});
