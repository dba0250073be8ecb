// The merchant-side verifier (webhook-verifier): signature over "<timestamp>.<raw body>",
// timestamp tolerance, header forms, secret lists, and a typed error for every refusal. Signatures
// are made with the service's own signer, so both sides are checked against each other.
import t, { type Test } from 'tap';
import { verifyWebhook, computeSignature, WebhookVerificationError } from '../webhook-verifier/index.ts';
import { sign, signedHeaders } from '../workers/webhooks/sender.ts';

const secret = 'whsec_test_secret_0123456789';
const now = new Date('2026-06-01T10:00:00Z');
const envelope = {
  id: '5b0d3c9e-8a4f-4a51-9a4e-1c2d3e4f5a6b',
  event: 'payin.completed',
  created_at: '2026-06-01T09:59:58.000Z',
  data: { type: 'payin', id: '0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a', object: { status: 'completed', amount: '5000' } },
};
const body = JSON.stringify(envelope);
const headers = () => ({ ...signedHeaders(secret, body, envelope.event, envelope.id, now) }) as Record<string, string>;

const fails = (t: Test, fn: () => unknown, code: string, msg: string) => {
  try {
    fn();
    t.fail(`${msg}: expected ${code}`);
  } catch (err) {
    t.type(err, WebhookVerificationError, msg);
    t.equal((err as WebhookVerificationError).code, code, msg);
  }
};

t.test('a genuine delivery verifies and is returned parsed', async (t) => {
  const ev = verifyWebhook(body, headers(), secret, { now });
  t.same(ev, envelope);
  t.same(verifyWebhook(Buffer.from(body), headers(), secret, { now }), envelope, 'a Buffer body');
  const lower = Object.fromEntries(Object.entries(headers()).map(([k, v]) => [k.toLowerCase(), v]));
  t.same(verifyWebhook(body, lower, secret, { now: now.getTime() }), envelope, "Node's lower-case headers, now as epoch ms");
  t.same(verifyWebhook(body, new Headers(headers()), secret, { now }), envelope, 'a Fetch Headers object');
  t.same(verifyWebhook(body, { ...lower, 'x-service-signature': [lower['x-service-signature']!] }, secret, { now }), envelope, 'an array header value');
  t.equal(computeSignature(secret, headers()['X-Service-Timestamp']!, body), sign(secret, headers()['X-Service-Timestamp']!, body), 'the verifier computes what the service signs');
});

t.test('a wrong secret, a changed body or a changed timestamp is refused', async (t) => {
  fails(t, () => verifyWebhook(body, headers(), 'whsec_other', { now }), 'invalid_signature', 'wrong secret');
  fails(t, () => verifyWebhook(body.replace('5000', '9000'), headers(), secret, { now }), 'invalid_signature', 'tampered body');
  fails(t, () => verifyWebhook(`${body} `, headers(), secret, { now }), 'invalid_signature', 'even one added byte');
  const h = headers();
  h['X-Service-Timestamp'] = String(Number(h['X-Service-Timestamp']) - 1);
  fails(t, () => verifyWebhook(body, h, secret, { now }), 'invalid_signature', 'the signature covers the timestamp');
  const bad = headers();
  bad['X-Service-Signature'] = bad['X-Service-Signature']!.replace(/^sha256=/, 'sha1=');
  fails(t, () => verifyWebhook(body, bad, secret, { now }), 'invalid_signature', 'another scheme');
  const short = headers();
  short['X-Service-Signature'] = 'sha256=abc';
  fails(t, () => verifyWebhook(body, short, secret, { now }), 'invalid_signature', 'a signature of another length');
});

t.test('timestamp tolerance (default 300 s) both ways', async (t) => {
  const at = (deltaSeconds: number) => new Date(now.getTime() + deltaSeconds * 1000);
  t.ok(verifyWebhook(body, headers(), secret, { now: at(300) }), '300 s late is accepted');
  t.ok(verifyWebhook(body, headers(), secret, { now: at(-300) }), '300 s early is accepted');
  fails(t, () => verifyWebhook(body, headers(), secret, { now: at(301) }), 'timestamp_out_of_tolerance', 'too old: a replay');
  fails(t, () => verifyWebhook(body, headers(), secret, { now: at(-301) }), 'timestamp_out_of_tolerance', 'too far in the future');
  fails(t, () => verifyWebhook(body, headers(), secret, { now: at(61), toleranceSeconds: 60 }), 'timestamp_out_of_tolerance', 'a tighter tolerance');
  const ms = headers();
  ms['X-Service-Timestamp'] = String(now.getTime());
  fails(t, () => verifyWebhook(body, ms, secret, { now }), 'invalid_timestamp', 'milliseconds are not seconds');
  const text = headers();
  text['X-Service-Timestamp'] = '2026-06-01T10:00:00Z';
  fails(t, () => verifyWebhook(body, text, secret, { now }), 'invalid_timestamp', 'not Unix seconds');
});

t.test('missing headers, mismatched ids, non-JSON bodies', async (t) => {
  const noSig = headers();
  delete noSig['X-Service-Signature'];
  fails(t, () => verifyWebhook(body, noSig, secret, { now }), 'missing_header', 'no signature');
  const noTs = headers();
  delete noTs['X-Service-Timestamp'];
  fails(t, () => verifyWebhook(body, noTs, secret, { now }), 'missing_header', 'no timestamp');
  const otherId = headers();
  otherId['X-Service-Webhook-Id'] = '00000000-0000-4000-8000-000000000000';
  fails(t, () => verifyWebhook(body, otherId, secret, { now }), 'invalid_payload', 'webhook id differs from the event id');
  const otherEvent = headers();
  otherEvent['X-Service-Event'] = 'payin.failed';
  fails(t, () => verifyWebhook(body, otherEvent, secret, { now }), 'invalid_payload', 'event header differs from the event');
  const notJson = 'not json';
  const signed = signedHeaders(secret, notJson, 'payin.completed', envelope.id, now) as unknown as Record<string, string>;
  fails(t, () => verifyWebhook(notJson, signed, secret, { now }), 'invalid_payload', 'signed but not JSON');
  t.throws(() => verifyWebhook(JSON.parse(body), headers(), secret, { now }), TypeError, 'parsed JSON is refused: pass the raw body');
  t.throws(() => verifyWebhook(body, headers(), '', { now }), TypeError, 'a secret is required');
});

t.test('several secrets (rotation): any one of them verifies', async (t) => {
  t.same(verifyWebhook(body, headers(), ['whsec_old', secret], { now }), envelope);
  fails(t, () => verifyWebhook(body, headers(), ['whsec_old', 'whsec_older'], { now }), 'invalid_signature', 'none matches');
});
