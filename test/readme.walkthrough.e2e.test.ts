// Issue 31, point 1: the README's walkthrough moves money end to end, and keeps doing so. Its marked
// shell blocks run with bash, in order, against a fresh service started with the README's own start
// command (as `node --import tsx app/main.ts`: `npm start` only builds first, and the build has its
// own test) on a fresh DATA_DIR and a free port. Every step's outcome is checked: the payin, payout
// and transfer completed; each webhook reached the README's receiver with its signature verified, a
// forged one refused; no secret was written into the checkout and the temporary files were removed.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from './helpers/app.ts';
import { freePort } from './helpers/net.ts';
import { changedFiles, marked, readme, root, shellBlocks, startEnv } from './helpers/readme-walkthrough.ts';

const text = readme();
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-walkthrough-'));
const dataDir = path.join(scratch, 'data');
const tmpDir = path.join(scratch, 'tmp'); // the walkthrough's TMPDIR: where its mktemp -d goes
fs.mkdirSync(tmpDir);
t.teardown(() => fs.rmSync(scratch, { recursive: true, force: true }));

interface Service { child: ChildProcess; exited: Promise<unknown>; log: () => string }

async function startService(port: number, env: Record<string, string>): Promise<Service> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'app/main.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (c) => { log += c; });
  child.stderr!.on('data', (c) => { log += c; });
  const exited = new Promise((r) => child.once('exit', r));
  const until = Date.now() + 60_000;
  for (;;) {
    const r = await request(`http://127.0.0.1:${port}`, 'GET', '/readyz').catch(() => undefined);
    if (r?.status === 200) return { child, exited, log: () => log };
    if (Date.now() > until || child.exitCode !== null) throw new Error(`service did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface Run { code: number | null; stdout: string; stderr: string; vars: Record<string, string> }

/**
 * The blocks as one bash script, stopping at the first failing command; each block announces itself
 * (to name the one that failed), and the shell's variables are saved at the end for the checks.
 */
function script(blocks: string[], stateFile: string): string {
  const body = blocks.map((b, i) => `echo '::block ${i}::'\n${b}`).join('\n');
  return `set -euo pipefail\nset -a\n${body}\nnode -e 'process.stdout.write(JSON.stringify(process.env))' > '${stateFile}'\n`;
}

async function runWalkthrough(blocks: string[], env: Record<string, string>): Promise<Run> {
  const stateFile = path.join(scratch, 'state.json');
  const bash = spawn('bash', ['-c', script(blocks, stateFile)], {
    cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: tmpDir, ...env },
  });
  // Whatever happens, nothing the walkthrough started (its receiver) outlives the test.
  const killGroup = () => { try { process.kill(-bash.pid!, 'SIGKILL'); } catch { /* gone */ } };
  t.teardown(killGroup);
  const timer = setTimeout(killGroup, 90_000);
  let stdout = '';
  let stderr = '';
  bash.stdout!.on('data', (c) => { stdout += c; });
  bash.stderr!.on('data', (c) => { stderr += c; });
  const code = await new Promise<number | null>((r) => bash.once('exit', r));
  clearTimeout(timer);
  // A receiver left running by a failed block holds the output pipes open: stop it, then read to the end.
  killGroup();
  if (bash.stdout!.readable || bash.stderr!.readable) await new Promise((r) => bash.once('close', r));
  const vars = fs.existsSync(stateFile) ? JSON.parse(fs.readFileSync(stateFile, 'utf8')) as Record<string, string> : {};
  fs.rmSync(stateFile, { force: true }); // it holds the secrets
  return { code, stdout, stderr, vars };
}

const portIsClosed = (port: number) => new Promise<boolean>((resolve) => {
  const s = net.connect(port, '127.0.0.1');
  s.once('connect', () => { s.destroy(); resolve(false); });
  s.once('error', () => resolve(true));
});

t.test('the README is short and gives the two commands', async (t) => {
  t.ok(text.split('\n').length < 200, `README.md has ${text.split('\n').length} lines (under 200)`);
  const two = shellBlocks(text.slice(text.indexOf('## Two commands')))[0] ?? '';
  t.match(two, /^npm ci && npm start\b/m, 'install and start');
  t.match(two, /^npm test\b/m, 'the test command (.ci/run runs it as the README\'s)');
});

t.test('the walkthrough moves money end to end', async (t) => {
  const port = await freePort();
  const webhookPort = await freePort();
  const service = await startService(port, startEnv(shellBlocks(marked(text, 'walkthrough:service'))[0] ?? ''));
  t.teardown(async () => { service.child.kill('SIGTERM'); await service.exited; });
  const blocks = shellBlocks(marked(text, 'walkthrough'));
  t.ok(blocks.length >= 5, `${blocks.length} shell blocks in the walkthrough`);

  const started = Date.now();
  const run = await runWalkthrough(blocks, { BASE_URL: `http://127.0.0.1:${port}`, DATA_DIR: dataDir, WEBHOOK_PORT: String(webhookPort) });
  t.comment(`walkthrough ran in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const failedBlock = [...run.stdout.matchAll(/::block (\d+)::/g)].at(-1)?.[1];
  if (run.code !== 0) {
    t.comment(`stdout:\n${run.stdout}\nstderr:\n${run.stderr}\nservice log (end):\n${service.log().slice(-3000)}`);
  }
  t.equal(run.code, 0, `every block ran without an error (the last one started: block ${failedBlock}: ${blocks[Number(failedBlock)]?.split('\n')[0]})`);
  if (run.code !== 0) return;
  await checkOutcome(t, run, port);
  t.ok(await portIsClosed(webhookPort), 'the walkthrough stopped its receiver');
  t.same(fs.readdirSync(tmpDir).filter((f) => f.startsWith('tmp.')), [], 'its temporary directory was removed');
  const secrets = [run.vars.API_SECRET!, run.vars.WEBHOOK_SECRET!, run.vars.ADMIN_TOKEN!];
  const leaked = changedFiles(root, started).filter((f) => {
    const content = fs.readFileSync(f, 'utf8');
    return secrets.some((s) => content.includes(s));
  });
  t.same(leaked, [], 'no secret was written into the checkout');
  t.notOk(fs.existsSync(path.join(root, 'key.json')), 'no key.json in the checkout');
});

async function checkOutcome(t: Test, run: Run, port: number) {
  const v = run.vars;
  for (const name of ['MERCHANT_ID', 'API_KEY', 'API_SECRET', 'WEBHOOK_SECRET', 'CUSTOMER_ID', 'PAYIN_ID', 'PAYOUT_ID', 'REFUND_ID', 'TRANSFER_ID', 'LINK_URL', 'LINK_PAYIN_ID']) {
    t.ok(v[name], `the walkthrough set ${name}`);
  }
  const lines = run.stdout.split('\n');
  t.ok(lines.includes(`payins/${v.PAYIN_ID} completed`), 'it printed the payin completed');
  t.ok(lines.includes(`payouts/${v.PAYOUT_ID} completed`), 'it printed the payout completed');
  t.ok(lines.includes(`refunds/${v.REFUND_ID} completed`), 'it printed the refund completed');
  t.ok(lines.includes('1000'), 'it printed the payin\'s refunded_amount');
  t.ok(lines.includes(`transfers/${v.TRANSFER_ID} completed`), 'it printed the transfer completed');
  t.ok(lines.includes(`payins/${v.LINK_PAYIN_ID} completed`), 'it printed the payment link\'s payin completed');
  t.ok(lines.includes('hold -1000'), 'the wallet\'s movements show the refund\'s hold');
  t.ok(lines.includes('400'), 'the forged delivery was answered 400');

  // The receiver's whole log, as the last block prints it: every delivery verified, in order.
  const log = lines.slice(lines.lastIndexOf('listening') + 1).filter((l) => /^(verified|refused) /.test(l));
  t.same(log, [
    'refused invalid_signature',
    `verified payin.completed ${v.PAYIN_ID} status=completed`,
    `verified payout.completed ${v.PAYOUT_ID} status=completed`,
    `verified refund.completed ${v.REFUND_ID} status=completed`,
    `verified transfer.payin.completed ${v.TRANSFER_ID} status=disbursing`,
    `verified transfer.payout.completed ${v.TRANSFER_ID} status=disbursing`,
    `verified transfer.completed ${v.TRANSFER_ID} status=completed`,
    `verified payin.completed ${v.LINK_PAYIN_ID} status=completed`,
  ], 'the receiver verified each event once (transfer leg snapshots still disbursing, as docs/WEBHOOKS.md says) and refused the forged one');

  // The same outcome as the service tells it, with the walkthrough's own credentials.
  const base = `http://127.0.0.1:${port}`;
  const merchant = { 'x-api-key': v.API_KEY!, 'x-api-secret': v.API_SECRET! };
  for (const [kind, id] of [['payins', v.PAYIN_ID], ['payouts', v.PAYOUT_ID], ['transfers', v.TRANSFER_ID]] as const) {
    const r = await request(base, 'GET', `/${kind}/${id}`, { headers: merchant });
    t.match(r.body, { id, status: 'completed', customer_id: v.CUSTOMER_ID }, `${kind}: completed for the walkthrough's customer`);
    const events = await request(base, 'GET', `/events?resource_id=${id}`, { headers: merchant });
    t.ok(events.body.data.length > 0 && events.body.data.every((e: { delivery_status: string }) => e.delivery_status === 'delivered'), `${kind}: its events delivered`);
  }
  // The payment link: its URL opens the payer's page, and the payin it made is the link's, for a customer made from the form.
  const linkId = new URL(v.LINK_URL!).pathname.split('/').at(-1)!;
  t.equal(new URL(v.LINK_URL!).origin, base, 'the link\'s URL is on the service\'s own origin');
  t.equal((await request(base, 'GET', new URL(v.LINK_URL!).pathname)).status, 410, 'paid once (max_payments 1), its page says it is closed');
  const linkPayin = await request(base, 'GET', `/payins/${v.LINK_PAYIN_ID}`, { headers: merchant });
  t.match(linkPayin.body, { status: 'completed', payment_link_id: linkId, send_amount: '2500' }, 'the payer paid the link');
  t.match((await request(base, 'GET', `/payment-links/${linkId}`, { headers: merchant })).body, { payments_count: 1, status: 'completed' }, 'its one payment made, the link is completed');
  const refund = await request(base, 'GET', `/refunds/${v.REFUND_ID}`, { headers: merchant });
  t.match(refund.body, { id: v.REFUND_ID, payin_id: v.PAYIN_ID, amount: '1000', status: 'completed' }, 'the refund completed for the payin');
  const m = await request(base, 'GET', `/admin/merchants/${v.MERCHANT_ID}`, { headers: { authorization: `Bearer ${v.ADMIN_TOKEN}` } });
  t.same(m.body.routing.corridors, ['CM-SN-XAF-XOF'], 'the corridor is open');
  t.match(run.stdout, /^XOF \d+$/m, 'the balances were printed');
}
