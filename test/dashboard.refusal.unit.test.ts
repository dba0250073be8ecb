// A refusal's words on a dashboard page (dashboard/refusal.ts): the dashboard's own by catalogue key,
// in the page's language (its message, for logs, the English one); the API's by error code where the
// catalogue names it; any other in the API's own words.
import t from 'tap';
import { DomainError } from '../domain/errors.ts';
import { translator } from '../i18n/catalogue.ts';
import { Refusal, errorText } from '../dashboard/refusal.ts';

const fr = translator('fr');
const en = translator('en');

t.test("the dashboard's own refusal: by key, in the page's language; English for the logs", async (t) => {
  const r = new Refusal('dash.error.url_refused', { reason: 'x' }, 'bad_request', [{ field: 'url', message: 'x' }]);
  t.equal(r.code, 'bad_request');
  t.equal(r.message, 'Webhook URL refused: x');
  t.same(r.details, [{ field: 'url', message: 'x' }]);
  t.equal(errorText(fr, r), 'URL de webhook refusée : x');
  t.equal(errorText(en, r), 'Webhook URL refused: x');
  t.equal(new Refusal('dash.error.link_not_found', {}, 'not_found').code, 'not_found');
});

t.test("the API's refusals: named by code where the catalogue has it, else in their own words", async (t) => {
  t.equal(errorText(fr, new DomainError('insufficient_balance', 'Insufficient balance')), 'Votre solde disponible est insuffisant pour cela.');
  t.equal(errorText(fr, new DomainError('limit_exceeded', 'at most 16 webhook endpoints')), 'Une limite est atteinte : at most 16 webhook endpoints');
  t.equal(errorText(fr, new DomainError('quote_expired', 'The quote has expired')), 'The quote has expired');
});
