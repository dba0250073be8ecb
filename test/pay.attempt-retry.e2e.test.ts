// A form sent again after its attempt was refused part-way (CONTRACT §16: the payer fixes the form
// and pays). A submit refused after its quote was made (the link busy or the operator closed by the
// time the payin committed: a race) leaves that quote under the attempt's derived id; the form comes
// back with the same attempt id, and the payer may then choose another operator.
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { attemptOf, cmPayer, get, newLink, post } from './helpers/pay.ts';
import { createQuote } from '../commands/quotes.ts';
import { attemptQuoteId } from '../commands/payment-link-attempts.ts';

const h = await startTestApp();
t.teardown(() => h.stop());

t.test('the attempt\'s earlier quote (MTN) does not bind the form sent again with Orange', async (t) => {
  const m = await h.newMerchant();
  const id = await newLink(h, m, { amount: '5000', maxPayments: null });
  const attempt = attemptOf((await get(h, `/pay/${id}`)).text);
  // What the refused first submit left behind: its quote, as payThroughLink makes it.
  await createQuote(h.app.services, {
    quoteId: attemptQuoteId(id, attempt, 'CM_MTN_MOMO'), merchantId: m.merchantId, customerId: null,
    request: { flow: 'payin', countryCode: 'CM', operatorCode: 'CM_MTN_MOMO', railType: 'mobile_money', sendAmount: '5000', sendCurrency: 'XAF' },
  }, { requestId: 'test', actor: 'test' });
  const r = await post(h, `/pay/${id}`, { ...cmPayer(attempt, '+237 690 00 00 01'), operator_code: 'CM_ORANGE_MOMO' });
  t.equal(r.status, 303, `paid (got ${r.status})`);
  const payins = (await h.as(m, 'GET', `/payins?payment_link_id=${id}`)).body.data;
  t.equal(payins.length, 1);
  t.equal(payins[0]?.source?.operator_code, 'CM_ORANGE_MOMO', 'through the operator the payer chose');
});
