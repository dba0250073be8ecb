// A refusal the dashboard itself raises (a choice not on the list, a setting missing): a DomainError
// like every other, answered the same way (errors.ts), carrying its catalogue key so the page says it
// in the reader's language; its message, for logs, is the English one.
import { DomainError, type ErrorDetail } from '../domain/errors.ts';
import { catalogues, fill, type MessageKey, type MessageParams, type Translate } from '../i18n/catalogue.ts';
import { keyFor } from './words.ts';

export class Refusal extends DomainError {
  constructor(readonly key: MessageKey, readonly params: MessageParams = {}, code: 'bad_request' | 'not_found' = 'bad_request', details?: ErrorDetail[]) {
    super(code, fill(catalogues().en[key], params), details);
  }
}

/** An error's message in the page's language: ours by key; the API's by code where the catalogue names it, else its own words. */
export function errorText(t: Translate, err: DomainError): string {
  if (err instanceof Refusal) return t(err.key, err.params);
  const key = keyFor('dash.code.', err.code);
  return key ? t(key, { message: err.message }) : err.message;
}
