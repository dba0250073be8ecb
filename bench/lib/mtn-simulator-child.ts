// The MTN MoMo simulator (test/simulators/mtn-momo.ts) as a process of its own, for
// bench/scenarios/payin-create-mtn.ts: in the bench's process it shared the event loop of the load
// generator, whose response times then held the simulator's work (a real MTN is another machine).
// Its options come as JSON in MTN_SIMULATOR_OPTIONS; a control server on PORT answers GET /healthz
// with the simulator's address and GET /report with what the scenario checks of its requests.
import http from 'node:http';
import { startMtnMomoSimulator, type MtnSimulatorOptions } from '../../test/simulators/mtn-momo.ts';

/** What payin-create-mtn checks of the simulator's requests and legs. */
export interface MtnSimulatorReport {
  /** The X-Reference-Id of every request-to-pay, one entry per request. */
  requestToPayReferences: string[];
  statusQueries: number;
  tokenCalls: number;
  legsSuccessful: number;
}

const REQUEST_TO_PAY = '/collection/v1_0/requesttopay';

const sim = await startMtnMomoSimulator(JSON.parse(process.env.MTN_SIMULATOR_OPTIONS ?? '{}') as MtnSimulatorOptions);

function report(): MtnSimulatorReport {
  const requestToPayReferences: string[] = [];
  let statusQueries = 0;
  for (const r of sim.requests) {
    if (r.method === 'POST' && r.path === REQUEST_TO_PAY) requestToPayReferences.push(String(r.headers['x-reference-id']));
    else if (r.method === 'GET' && r.path.startsWith(`${REQUEST_TO_PAY}/`)) statusQueries++;
  }
  return {
    requestToPayReferences, statusQueries, tokenCalls: sim.count('POST /collection/token/'),
    legsSuccessful: [...sim.legs.values()].filter((l) => l.status === 'SUCCESSFUL').length,
  };
}

const control = http.createServer((req, res) => {
  const body = req.url === '/healthz' ? { url: sim.url } : req.url === '/report' ? report() : undefined;
  res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? { error: 'not found' }));
});
control.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => {
  control.close();
  void sim.down().then(() => process.exit(0));
});
