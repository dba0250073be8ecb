// The customer aggregate as specifications: given these events, when this command, then these
// events (or this refusal).
import t, { type Test } from 'tap';
import { fold } from '../domain/decider.ts';
import { DomainError, InvariantViolation } from '../domain/errors.ts';
import {
  customerDecider, requireNamedCustomer, type CreateCustomer, type CustomerCommand, type CustomerEvent, type CustomerState,
} from '../domain/customer.ts';
import { deciderSpec } from './helpers/spec.ts';

const CUSTOMER = '11111111-1111-4111-8111-111111111111';
const MERCHANT = '22222222-2222-4222-8222-222222222222';
const OTHER_MERCHANT = '33333333-3333-4333-8333-333333333333';
const AT = '2026-06-01T10:00:00.000Z';

const customers = deciderSpec(customerDecider);
const given = (events: CustomerEvent[]): CustomerState => fold(customerDecider, events);
const create = (over: Partial<CreateCustomer> = {}): CustomerCommand => ({
  type: 'CreateCustomer',
  data: {
    customerId: CUSTOMER, merchantId: MERCHANT, customerType: 'individual',
    profile: { first_name: 'Awa', last_name: 'Diop' }, at: AT, ...over,
  },
});

/** The fields a bad_request names, given nothing, when this customer is created. */
function refusedFields(t: Test, over: Partial<CreateCustomer>, message?: string): string[] {
  const e = customers.given([]).when(create(over)).thenThrows(t, 'bad_request', message);
  return (e?.details ?? []).map((d) => d.field).sort();
}
/** The events decided, given nothing, when this customer is created. */
const createdFrom = (over: Partial<CreateCustomer>) => customers.given([]).when(create(over)).events() as Array<Extract<CustomerEvent, { type: 'customer.created' }>>;

const created: CustomerEvent = {
  type: 'customer.created',
  data: { customer_id: CUSTOMER, merchant_id: MERCHANT, customer_type: 'individual', profile: { first_name: 'Awa', last_name: 'Diop' }, at: AT },
};

t.test('given nothing, when an individual is created, then customer.created with the profile as sent', async (t) => {
  const profile = {
    first_name: 'Awa', last_name: 'Diop', email: 'awa@example.com', country_code: 'SN', nationality_code: 'SN',
    date_of_birth: '1990-04-12', address_line1: '12 rue Carnot', city: 'Dakar', occupation: 'Trader',
    source_of_funds: 'Salary', external_ref: 'crm-42', metadata: { segment: 'gold' },
  };
  customers.given([]).when(create({ profile })).then(t, [{
    type: 'customer.created',
    data: { customer_id: CUSTOMER, merchant_id: MERCHANT, customer_type: 'individual', profile, at: AT },
  }]);
});

t.test('the phone is stored in E.164, read against the customer country', async (t) => {
  const [e] = createdFrom({ profile: { first_name: 'A', last_name: 'B', phone: '77 123 45 67', country_code: 'SN' } });
  t.equal(e?.data.profile.phone, '+221771234567');
  const noCountry = createdFrom({ profile: { first_name: 'A', last_name: 'B', phone: '+237 677 12 34 56' } });
  t.equal(noCountry[0]?.data.profile.phone, '+237677123456', 'E.164 without a country: any covered country');
  const abroad = createdFrom({ profile: { first_name: 'A', last_name: 'B', phone: '+2250707123456', country_code: 'FR' } });
  t.equal(abroad[0]?.data.profile.phone, '+2250707123456', 'a customer living outside the covered countries keeps a covered E.164 phone');
});

t.test('a phone that is not the customer country\'s, or not a number, is refused naming phone', async (t) => {
  t.same(refusedFields(t, { profile: { first_name: 'A', last_name: 'B', phone: '+237677123456', country_code: 'SN' } }), ['phone']);
  t.same(refusedFields(t, { profile: { first_name: 'A', last_name: 'B', phone: '123' } }), ['phone']);
  t.same(refusedFields(t, { profile: { first_name: 'A', last_name: 'B', phone: '677123456', country_code: 'FR' } }), ['phone'], 'a national form needs a covered country');
});

t.test('required identity fields by type, each missing one named', async (t) => {
  t.same(refusedFields(t, { customerType: 'individual', profile: {} }), ['first_name', 'last_name']);
  t.same(refusedFields(t, { customerType: 'individual', profile: { first_name: 'A' } }), ['last_name']);
  t.same(refusedFields(t, { customerType: 'retail', profile: { first_name: 'A', last_name: 'B' } }), ['id_number']);
  t.same(refusedFields(t, { customerType: 'retail', profile: {} }), ['first_name', 'id_number', 'last_name']);
  t.same(refusedFields(t, { customerType: 'business', profile: { first_name: 'A', last_name: 'B' } }), ['business_name']);
  t.same(refusedFields(t, { customerType: 'individual', profile: { first_name: '  ', last_name: 'B' } }), ['first_name'], 'blank is missing');
});

t.test('each type with its required fields is accepted', async (t) => {
  t.equal(createdFrom({ customerType: 'retail', profile: { first_name: 'A', last_name: 'B', id_number: 'CNI-1' } }).length, 1);
  const [b] = createdFrom({ customerType: 'business', profile: { business_name: 'Acme SARL' } });
  t.equal(b?.data.customer_type, 'business');
});

t.test('date of birth: a real date, not in the future, not before 1900', async (t) => {
  const dob = (date_of_birth: string) => ({ profile: { first_name: 'A', last_name: 'B', date_of_birth } });
  t.same(refusedFields(t, dob('2026-06-03')), ['date_of_birth'], 'after today everywhere');
  t.same(refusedFields(t, dob('2023-02-30')), ['date_of_birth'], 'no such day');
  t.same(refusedFields(t, dob('1899-12-31')), ['date_of_birth']);
  t.same(refusedFields(t, dob('12/04/1990')), ['date_of_birth']);
  t.equal(createdFrom(dob('2026-06-01')).length, 1, 'today (UTC) is accepted');
  t.equal(createdFrom(dob('2026-06-02')).length, 1, 'today where it is already tomorrow (UTC+14) is accepted');
  t.equal(createdFrom(dob('2024-02-29')).length, 1, 'a leap day');
});

t.test('every problem is reported at once', async (t) => {
  const fields = refusedFields(t, { customerType: 'retail', profile: { first_name: 'A', phone: 'x', date_of_birth: '2999-01-01' } });
  t.same(fields, ['date_of_birth', 'id_number', 'last_name', 'phone']);
});

t.test('only profile fields are recorded', async (t) => {
  const profile = { first_name: 'A', last_name: 'B', is_admin: 'yes' } as unknown as CreateCustomer['profile'];
  const [e] = createdFrom({ profile });
  t.same(e?.data.profile, { first_name: 'A', last_name: 'B' });
});

t.test('given created, when created again with the same id, then nothing (a retried create)', async (t) => {
  customers.given([created]).when(create({ profile: { first_name: 'Other', last_name: 'Body' } })).thenNothing(t);
});

t.test('given created for one merchant, the same id for another merchant is a broken invariant', async (t) => {
  customers.given([created]).when(create({ merchantId: OTHER_MERCHANT })).thenThrows(t, InvariantViolation);
});

t.test('evolve: a created customer has not started KYC', async (t) => {
  const s = given([created]);
  t.match(s, { exists: true, id: CUSTOMER, merchantId: MERCHANT, customerType: 'individual', kycStatus: 'not_started', createdAt: AT, updatedAt: AT });
  t.same(s.profile, { first_name: 'Awa', last_name: 'Diop' });
  t.equal(given([]).exists, false);
});

t.test('a customer named by a money command: another merchant\'s is no customer (customer_not_found naming customer_id)', async (t) => {
  t.doesNotThrow(() => requireNamedCustomer(given([created]), MERCHANT));
  for (const [history, merchantId] of [[[created], OTHER_MERCHANT], [[], MERCHANT]] as const) {
    try {
      requireNamedCustomer(given([...history]), merchantId);
      t.fail('expected customer_not_found');
    } catch (err) {
      t.ok(err instanceof DomainError, 'a DomainError');
      t.equal((err as DomainError).code, 'customer_not_found');
      t.same((err as DomainError).details?.map((d) => d.field), ['customer_id']);
    }
  }
});
