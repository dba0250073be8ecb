// Readiness does not depend on the providers (issue 41 point 7, CONTRACT §15): with pawaPay down
// (connections refused) and MTN MoMo hanging (it takes every payment request and never answers),
// payins are sent to both and stay in flight for PROVIDER_TIMEOUT_MS, and meanwhile GET /readyz
// (and /healthz) answer 200 within a second, every time. A hanging provider holds at most
// PROVIDER_STARTS_IN_FLIGHT of the gateway's starts: the other providers' legs go on meanwhile.
//
// What is checked is what happened, not how long it took (issue 45: under load the probes outlasted
// the 6-s time-out, the first requests to pay timed out, the next ones started, and the count of
// requests MTN had seen was 6, not 3): the most requests hanging at MTN at once (the simulator's
// own count), the sandbox's payin completed before any of them ended, each probe made while MTN held
// some, and its time less the time this process waited for a CPU (the service's bound is its own).
// The time-out is a margin a loaded machine keeps for the sandbox's payin; once probed, MTN answers
// the requests still to come, so only the first ones wait for it.
import t from 'tap';
import { startTestApp, request } from './helpers/app.ts';
import { leg, newCustomer, party, quote, settled, sleep, until } from './helpers/money.ts';
import { setRouting, simulatedProviders } from './helpers/providers.ts';
import { ownTime } from './helpers/run-queue.ts';
import { PROVIDER_STARTS_IN_FLIGHT } from '../commands/leg-initiation.ts';

const TIMEOUT_MS = 15_000;
const { mtn, pawapay, env, close } = await simulatedProviders({ n: 2, timeoutMs: TIMEOUT_MS });
const h = await startTestApp({ env });
t.teardown(async () => {
  await h.stop();
  await close();
});

const routing = (code: string, providers: string[]) => setRouting(h, code, providers);
const m = await h.newMerchant('Outage');
const customer = await newCustomer(h, m, 'CM', '+237670000001');
async function payin(operator: string, country: string, currency: string, phone: string): Promise<string> {
  const q = await quote(h, m, 'payin', leg(operator, country, currency, '5000'));
  const p = await h.as(m, 'POST', '/payins', { quote_id: q.id, customer_id: customer, source: party(country, operator, phone) }, { idem: true });
  if (p.status !== 201) throw new Error(`payin: ${p.status} ${p.text}`);
  return p.body.id as string;
}
const sentToMtn = () => mtn.requests.filter((r) => r.method === 'POST' && r.path === '/collection/v1_0/requesttopay').length;
/** Requests to pay that MTN held and that have ended since (timed out by the service). */
const endedAtMtn = () => sentToMtn() - mtn.hangingNow;

/** One probe: its status, how long it took less the time this process waited for a CPU, and how many requests MTN held meanwhile. */
async function probe(path: string): Promise<{ status: number; ms: number; waitedMs: number; hanging: number }> {
  const took = ownTime();
  const r = await request(h.url, 'GET', path);
  const { ownMs, waitedMs } = took();
  return { status: r.status, ms: ownMs, waitedMs, hanging: mtn.hangingNow };
}

t.test('GET /readyz stays 200 within a second while payins hang at MTN and are refused by pawaPay', async (t) => {
  t.equal((await probe('/readyz')).status, 200, 'ready before the outage');
  await routing('CM_MTN_MOMO', ['mtn_momo', 'pawapay']); // hangs at MTN: in doubt at the time-out, never fails over
  await routing('BJ_MTN_MOMO', ['pawapay', 'mtn_momo']); // refused by pawaPay, then hangs at MTN
  await routing('CM_ORANGE_MOMO', ['pawapay']); // refused: fails at once
  await pawapay.down();
  // Every request to pay is recorded and never answered: in doubt at the time-out; the status
  // queries after it are answered (the leg is there), so the outage ends by itself.
  // Two more payins for MTN than it may hold at once: they wait their turn.
  const toMtn = PROVIDER_STARTS_IN_FLIGHT + 2;
  mtn.fault({ method: 'POST', path: '/collection/v1_0/requesttopay', hang: true, record: true, times: toMtn });

  const ids = await Promise.all([
    ...Array.from({ length: toMtn - 2 }, (_, i) => payin('CM_MTN_MOMO', 'CM', 'XAF', `+2376700004${String(i).padStart(2, '0')}`)),
    ...Array.from({ length: 2 }, (_, i) => payin('BJ_MTN_MOMO', 'BJ', 'XOF', `+2299700004${i}`)),
    ...Array.from({ length: 4 }, (_, i) => payin('CM_ORANGE_MOMO', 'CM', 'XAF', `+2376990004${String(i).padStart(2, '0')}`)),
  ]);
  const hanging = ids.slice(0, toMtn);
  const refused = ids.slice(toMtn);
  await until('payins hanging at MTN', async () => mtn.hangingNow >= PROVIDER_STARTS_IN_FLIGHT);
  // A hanging provider holds a few of the gateway's starts, never all: a payin on the sandbox completes meanwhile.
  const elsewhere = await payin('SN_WAVE_MOMO', 'SN', 'XOF', '+221770000001');
  t.equal((await settled(h, m, 'payins', elsewhere)).status, 'completed');
  t.equal(endedAtMtn(), 0, `the sandbox's payin completed while MTN held its ${mtn.hangingNow} requests, none of them ended yet`);
  const probes: Array<{ path: string; status: number; ms: number; waitedMs: number; hanging: number }> = [];
  // Twenty probes, however long a loaded machine takes for them (each is timed on its own).
  while (probes.length < 20) {
    for (const path of ['/readyz', '/healthz']) probes.push({ path, ...(await probe(path)) });
    await sleep(100);
  }
  t.same(probes.filter((p) => p.hanging === 0), [], `every probe made while MTN held requests to pay (${probes.map((p) => p.hanging).join(', ')})`);
  mtn.clearFaults(); // probed: MTN answers the requests to pay still to come
  const slow = probes.filter((p) => p.status !== 200 || p.ms >= 1000);
  t.same(slow, [], 'every probe 200 within a second');
  t.ok(Math.max(...probes.map((p) => p.ms)) < 1000, `slowest probe ${Math.round(Math.max(...probes.map((p) => p.ms)))} ms ` +
    `(less up to ${Math.round(Math.max(...probes.map((p) => p.waitedMs)))} ms waiting for a CPU)`);
  for (const id of refused) t.equal((await settled(h, m, 'payins', id)).status, 'failed', 'refused by pawaPay, the only provider: failed');

  // The initiations time out: the legs in doubt are settled by their status queries, at MTN. The
  // ones that waited their turn are answered (pawaPay still down: Benin's go to MTN as the others did).
  for (const id of hanging) t.equal((await settled(h, m, 'payins', id)).status, 'completed', 'settled by its status once MTN answers');
  await pawapay.up();
  t.equal(sentToMtn(), hanging.length, `each of the ${hanging.length} payins routed to MTN asked it once: the others waited their turn`);
  t.equal(mtn.peakHanging, PROVIDER_STARTS_IN_FLIGHT, `at most ${mtn.peakHanging} requests to pay hanging at MTN at once`);
  // The gateway starts 16 legs at once (bench/PROFILE.md §34): 14 of them may wait on one provider.
  t.equal(mtn.peakHanging, 14, 'fourteen starts in flight at MTN at once (the gateway\'s sixteen, less the two kept for other providers)');
});
