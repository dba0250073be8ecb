// A start refused because its only provider's starts are all in flight here (ProviderBusy) leaves
// no provider_legs row: when its trigger comes again it follows the routing of then. An operator
// who moves an operator off a provider that hangs moves the legs that provider never saw; the legs
// it holds stay with it (their rows were written before their requests).
import t from 'tap';
import { startTestApp } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, sleep, until } from './helpers/money.ts';
import { setRouting, simulatedProviders } from './helpers/providers.ts';
import { PROVIDER_STARTS_IN_FLIGHT } from '../commands/leg-initiation.ts';

const TIMEOUT_MS = 4_000;
const { mtn, env, close } = await simulatedProviders({ n: 3, timeoutMs: TIMEOUT_MS });
const h = await startTestApp({ env });
t.teardown(async () => {
  await h.stop();
  await close();
});

const routing = (code: string, providers: string[]) => setRouting(h, code, providers);
const rowOf = async (id: string): Promise<{ provider: string } | undefined> =>
  h.app.services.knex('provider_legs').where({ reference: id }).first('provider');

t.test('a leg refused as busy has no row, and goes where the routing says when it comes again', async (t) => {
  const m = await h.newMerchant();
  const customer = await newCustomer(h, m);
  const payin = async (phone: string) => {
    const q = await quote(h, m, 'payin', leg('CM_MTN_MOMO', 'CM', 'XAF', '5000'));
    const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party('CM', 'CM_MTN_MOMO', phone) }, { idem: true });
    if (p.status !== 201) throw new Error(`payin: ${p.status} ${p.text}`);
    return p.body.id as string;
  };
  await routing('CM_MTN_MOMO', ['mtn_momo']); // one provider: no failover
  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', hang: true, record: true, times: PROVIDER_STARTS_IN_FLIGHT });
  const held = await Promise.all(Array.from({ length: PROVIDER_STARTS_IN_FLIGHT }, (_, i) => payin(`+2376700005${String(i).padStart(2, '0')}`)));
  await until('MTN holds every start slot', async () => mtn.hangingNow >= PROVIDER_STARTS_IN_FLIGHT);
  const waiting = await payin('+237670000577');
  await sleep(1_500); // its trigger refused as busy, and tried again, about three times
  t.equal(mtn.hangingNow, PROVIDER_STARTS_IN_FLIGHT, 'MTN still holds the others');
  t.equal(await rowOf(waiting), undefined, 'refused as busy: no row names MTN for it');
  await routing('CM_MTN_MOMO', ['sandbox']);
  t.equal((await settled(h, m, 'payins', waiting)).status, 'completed', 'it went where the routing says now');
  t.same(await rowOf(waiting), { provider: 'sandbox' });
  mtn.clearFaults();
  for (const id of held) {
    t.equal((await settled(h, m, 'payins', id)).status, 'completed', 'the ones MTN held: settled by their status at MTN');
    t.same(await rowOf(id), { provider: 'mtn_momo' }, 'and still with MTN');
  }
});
