// An integrator's first flow with a client generated from the served document (openapi-typescript
// writes ./openapi.ts next to this file in test/openapi.client.int.test.ts, which type-checks this
// file in strict mode and runs it): a customer, a payin quote, a payin, read back and listed. It
// uses no `!`: every field read here is `required` in the document, so its type is not optional,
// and every error answer is a branch the compiler makes us handle.
import createClient from 'openapi-fetch';
import type { components, paths } from './openapi.ts';

type Payin = components['schemas']['Payin'];
/** A payin's statuses: `NonNullable` so that an optional status (not required) would not type-check. */
type PayinStatus = NonNullable<Payin['status']>;
type ErrorCode = components['schemas']['Error']['error']['code'];

export interface FirstPayin {
  payin: Payin;
  status: PayinStatus;
  listed: string[];
  /** What a refused request answered: its code is one of the document's error codes. */
  refusal: ErrorCode;
}

class ApiError extends Error {
  constructor(readonly code: ErrorCode, message: string) {
    super(`${code}: ${message}`);
  }
}

export async function firstPayin(baseUrl: string, apiKey: string, apiSecret: string): Promise<FirstPayin> {
  const client = createClient<paths>({ baseUrl, headers: { 'X-Api-Key': apiKey, 'X-Api-Secret': apiSecret } });
  const idempotent = (key: string) => ({ header: { 'Idempotency-Key': `${key}-${Date.now()}-${Math.random()}` } });

  const customer = await client.POST('/customers', {
    params: idempotent('customer'),
    body: { first_name: 'Awa', last_name: 'Diop', phone: '+237670000001', country_code: 'CM' },
  });
  if (customer.error) throw new ApiError(customer.error.error.code, customer.error.error.message);
  const customerId: string = customer.data.id;

  const quote = await client.POST('/quotes/payin', {
    params: idempotent('quote'),
    body: { customer_id: customerId, country_code: 'CM', operator_code: 'CM_MTN_MOMO', rail_type: 'mobile_money', send_amount: '5000', send_currency: 'XAF' },
  });
  if (quote.error) throw new ApiError(quote.error.error.code, quote.error.error.message);
  const expiresAt: string = quote.data.expires_at;
  const fee: string = quote.data.pricing.total_fee;
  if (Date.parse(expiresAt) <= Date.now() || fee === '') throw new Error('the quote is not usable');

  const created = await client.POST('/payins', {
    params: idempotent('payin'),
    body: { quote_id: quote.data.id, customer_id: customerId, source: { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: '+237670000001' } },
  });
  if (created.error) throw new ApiError(created.error.error.code, created.error.error.message);

  const read = await client.GET('/payins/{payin_id}', { params: { path: { payin_id: created.data.id } } });
  if (read.error) throw new ApiError(read.error.error.code, read.error.error.message);
  const status: PayinStatus = read.data.status;
  const receive: string = read.data.receive_amount;
  const history: string[] = read.data.history.map((h) => h.status);
  if (receive === '' || history.length === 0) throw new Error('the payin is incomplete');

  const list = await client.GET('/payins', { params: { query: { limit: 10, customer_id: customerId } } });
  if (list.error) throw new ApiError(list.error.error.code, list.error.error.message);
  const more: boolean = list.data.has_more;
  const cursor: string | null = list.data.next_cursor;
  if (more && cursor === null) throw new Error('a next page without a cursor');

  // A refusal is typed too: a quote that belongs to a payment already.
  const again = await client.POST('/payins', {
    params: idempotent('again'),
    body: { quote_id: quote.data.id, customer_id: customerId, source: { country_code: 'CM', rail_type: 'mobile_money', operator_code: 'CM_MTN_MOMO', phone: '+237670000001' } },
  });
  if (!again.error) throw new Error('a consumed quote backed a second payin');

  return { payin: read.data, status, listed: list.data.data.map((p) => p.id), refusal: again.error.error.code };
}
