// Tenant isolation (issue 9 point 5): merchant B gets one of every resource (customer with a KYC
// submission, quote, payin, payout, transfer, webhook events); then every merchant operation of the
// served OpenAPI document that takes an id (in its path, in a list filter, or in its body) is called
// with merchant A's credentials and B's ids. A leak is any 2xx on an id-bearing path, or any answer
// that carries one of B's ids or B's data. The matrix is built from the document: an operation whose
// path parameter names no known kind of resource fails the test, so a new endpoint cannot slip by.
import t from 'tap';
import { startTestApp, type MerchantCreds, type HttpResult } from './helpers/app.ts';
import { dbLabel } from './helpers/db.ts';
import { leg, party, quote, topUp, until } from './helpers/money.ts';
import { transferQuote, payerCM, recipientSN, settledTransfer } from './helpers/transfers.ts';
import { operations, sample, fields, fillPath, type Op } from './helpers/openapi-walk.ts';
import { request } from './helpers/app.ts';

const h = await startTestApp();
t.teardown(() => h.stop());
const doc = (await request(h.url, 'GET', '/openapi.json')).body;
const merchantOps = operations(doc).filter((o) => o.auth === 'merchant');

const A: MerchantCreds = await h.newMerchant('Tenant A');
const B: MerchantCreds = await h.newMerchant('Tenant B');
for (const m of [A, B]) {
  await h.admin('PUT', `/admin/merchants/${m.merchantId}/routing`, { corridors: ['CM-SN-XAF-XOF'] });
  await topUp(h, m, 'XOF', '100000');
}

// B's resources, with data distinctive enough to be recognised in any answer.
const B_NAME = 'Zanzibar-Tenant-B-Only';
const bCustomer = await h.as(B, 'POST', '/customers', { first_name: B_NAME, last_name: 'Secret', phone: '+221770000001', country_code: 'SN', external_ref: `ext-${B_NAME}` }, { idem: true });
const bKyc = await h.as(B, 'POST', `/customers/${bCustomer.body.id}/kyc`, {
  documents: [{ document_type: 'national_id', document_number: `DOC-${B_NAME}`, issue_country_code: 'SN', front_file_url: 'http://127.0.0.1:9/front.png' }],
});
const bQuote = await quote(h, B, 'payin', leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000'));
const bPayin = await h.as(B, 'POST', '/payins', { quote_id: bQuote.id, customer_id: bCustomer.body.id, source: party('SN', 'SN_WAVE_MOMO', '+221770000001'), metadata: { tag: B_NAME } }, { idem: true });
const bPayoutQuote = await quote(h, B, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000'));
const bPayout = await h.as(B, 'POST', '/payouts', {
  quote_id: bPayoutQuote.id, customer_id: bCustomer.body.id, payment_reason_text: B_NAME,
  recipient: { ...party('SN', 'SN_WAVE_MOMO', '+221770000002'), recipient_type: 'individual', first_name: B_NAME, last_name: 'R' },
}, { idem: true });
// A bulk payout request of B's (CONTRACT §10): GET /payouts/bulk/{batch_id}.
const bBatchQuote = await quote(h, B, 'payout', leg('SN_WAVE_MOMO', 'SN', 'XOF', '5000'));
const bBatch = await h.as(B, 'POST', '/payouts/bulk', { items: [{
  reference: `ref-${B_NAME}`, quote_id: bBatchQuote.id, customer_id: bCustomer.body.id, payment_reason_text: B_NAME,
  recipient: { ...party('SN', 'SN_WAVE_MOMO', '+221770000002'), recipient_type: 'individual', first_name: B_NAME, last_name: 'R' },
}] }, { idem: true });
const bTq = await transferQuote(h, B);
// The disbursement fails, so relaunch-payout is allowed for B (and must still be refused to A).
const bTransfer = await h.as(B, 'POST', '/transfers', { quote_id: bTq.id, customer_id: bCustomer.body.id, payer: payerCM(), recipient: recipientSN('+221770000099') }, { idem: true });
await settledTransfer(h, B, bTransfer.body.id, 'failed');
const bEvent = await until('B has webhook events', async () => (await h.as(B, 'GET', '/events')).body.data?.[0]?.id as string | undefined);
// A refund of B's completed payin (CONTRACT §9) and a webhook endpoint of B's (§11).
await until('B\'s payin completed', async () => (await h.as(B, 'GET', `/payins/${bPayin.body.id}`)).body.status === 'completed');
const bRefund = await h.as(B, 'POST', '/refunds', { payin_id: bPayin.body.id, amount: '1000', reason: B_NAME }, { idem: true });
const bEndpoint = await h.as(B, 'POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks-b', description: B_NAME }, { idem: true });
// A payment link of B's (CONTRACT §16).
const bLink = await h.as(B, 'POST', '/payment-links', { amount: '5000', currency: 'XAF', description: B_NAME, max_payments: null }, { idem: true });

/** B's resource ids by the name a path parameter, a filter or a body field gives them. */
const bIds: Record<string, string> = {
  customer_id: bCustomer.body.id, quote_id: bQuote.id, payin_id: bPayin.body.id, payout_id: bPayout.body.id,
  transfer_id: bTransfer.body.id, event_id: bEvent, batch_id: bBatch.body.id, refund_id: bRefund.body.id, endpoint_id: bEndpoint.body.id,
  payment_link_id: bLink.body.id,
  // Not an id: a currency names one of the caller's own wallets (B's wallet is never reachable by it).
  currency: 'XOF',
};
/** Path parameters that scope to the caller's own resources: A gets its own (2xx), never B's data. */
const ownScoped = new Set(['currency']);
const bSecrets = [...Object.entries(bIds).filter(([name]) => !ownScoped.has(name)).map(([, id]) => id), bPayoutQuote.id, bBatchQuote.id, bBatch.body.items?.[0]?.payout?.id, bTq.id, B.merchantId, B_NAME].filter((x): x is string => typeof x === 'string');

t.test('B has one of every resource', async (t) => {
  for (const r of [bCustomer, bPayin, bPayout, bTransfer, bBatch, bRefund, bEndpoint, bLink]) t.equal(r.status, 201, r.text.slice(0, 200));
  t.equal(bBatch.body.items[0].status, 201, 'a bulk payout request with its payout');
  t.equal(bKyc.status, 201, 'a KYC submission');
  t.ok(bEvent, 'a webhook event');
  // B sees them: the ids are real, so a 404 for A means isolation, not a typo.
  for (const op of merchantOps.filter((o) => o.method === 'GET' && o.params.some((p) => p.in === 'path'))) {
    const p = op.params.filter((x) => x.in === 'path').map((x) => x.name);
    if (!p.every((n) => n in bIds)) continue;
    t.equal((await h.as(B, 'GET', fillPath(op.path, bIds))).status, 200, `B reads ${op.path}`);
  }
});

interface Probe { op: Op; what: string; res: HttpResult; expectRefusal: boolean }
const probes: Probe[] = [];
const leaks: string[] = [];
const uncovered: string[] = [];

function leaked(p: Probe): string | undefined {
  if (p.expectRefusal && p.res.status >= 200 && p.res.status < 300) return `2xx (${p.res.status})`;
  const hit = bSecrets.find((s) => p.res.text.includes(s));
  return hit ? `answer carries ${hit === B_NAME ? "B's data" : `B's id ${hit}`}` : undefined;
}

t.test("A's credentials against B's resources, every id-bearing merchant operation", async (t) => {
  for (const op of merchantOps) {
    const pathParams = op.params.filter((p) => p.in === 'path');
    const idQuery = op.params.filter((p) => p.in === 'query' && /_id$/.test(p.name));
    const bodyIdFields = op.body ? fields(doc, op.body).filter((f) => /_id$/.test(f.path[f.path.length - 1]!) && f.path.length === 1) : [];
    if (pathParams.length === 0 && idQuery.length === 0 && bodyIdFields.length === 0) continue;
    const missing = pathParams.filter((p) => !(p.name in bIds));
    if (missing.length > 0) {
      uncovered.push(`${op.method} ${op.path}: no B resource for ${missing.map((p) => p.name).join(', ')}`);
      continue;
    }
    const body = op.body ? sample(doc, op.body, bIds) : undefined;
    const send = async (what: string, path: string, expectRefusal: boolean) => {
      const res = await h.as(A, op.method, path, body, { idem: op.idempotent });
      probes.push({ op, what, res, expectRefusal });
    };
    if (pathParams.length > 0) await send('path ids', fillPath(op.path, bIds), !pathParams.every((p) => ownScoped.has(p.name)));
    for (const q of idQuery) {
      const values = q.name in bIds ? [bIds[q.name]!] : Object.values(bIds); // resource_id: any of B's
      for (const v of values) await send(`filter ${q.name}`, `${fillPath(op.path, bIds)}?${q.name}=${v}`, pathParams.length > 0);
    }
    if (pathParams.length === 0 && bodyIdFields.length > 0) await send(`body ${bodyIdFields.map((f) => f.path.join('.')).join(', ')}`, op.path, true);
  }
  for (const p of probes) {
    const why = leaked(p);
    if (why) leaks.push(`${p.op.method} ${p.op.path} [${p.what}] → ${p.res.status}: ${why}`);
    if (!why) t.pass(`${p.op.method} ${p.op.path} [${p.what}] → ${p.res.status}`);
  }
  // A's own unfiltered lists never show B's resources either. A stream (Server-Sent Events) never
  // ends by itself: it is asked to resume after B's event instead, which must be refused at once.
  for (const op of merchantOps.filter((o) => o.method === 'GET' && !o.params.some((p) => p.in === 'path'))) {
    const streamed = !!doc.paths[op.path].get.responses['200']?.content?.['text/event-stream'];
    const res = await h.as(A, 'GET', streamed ? `${op.path}?after=${bEvent}` : op.path);
    if (streamed) t.equal(res.status, 404, `${op.path} resuming after B's event: 404`);
    const p: Probe = { op, what: 'unfiltered', res, expectRefusal: false };
    probes.push(p);
    const why = leaked(p);
    if (why) leaks.push(`${op.method} ${op.path} [unfiltered] → ${res.status}: ${why}`);
  }
  t.same(uncovered, [], 'every id-bearing path parameter names a kind of resource B has');
  t.same(leaks, [], 'no leak');
});

t.test('the matrix covers every id-bearing operation of the document', async (t) => {
  const idOps = merchantOps.filter((o) => o.params.some((p) => p.in === 'path'));
  const probed = new Set(probes.filter((p) => p.what === 'path ids').map((p) => p.op.operationId));
  t.same(idOps.filter((o) => !probed.has(o.operationId)).map((o) => `${o.method} ${o.path}`), [], 'each one probed');
  t.ok(idOps.length >= 15, `${idOps.length} id-bearing merchant operations`);
  const ops = new Set(probes.map((p) => p.op.operationId)).size;
  t.comment(`tenant isolation (${dbLabel}): ${ops} operations x ${probes.length} requests, leaks=${leaks.length}`);
});
