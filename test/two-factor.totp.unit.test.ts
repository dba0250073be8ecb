// TOTP as the dashboard configures it (infra/totp.ts, through the otpauth package): RFC 6238's SHA-1
// test vectors, the one-step window either side, the step a code is matched to (what replay checks
// compare), malformed codes, and the otpauth:// URI an authenticator app reads.
import t from 'tap';
import { matchingTimeStep, newTotpSecret, timeStepAt, totpCodeAt, totpUri } from '../infra/totp.ts';

// RFC 6238 Appendix B: the SHA-1 key is the ASCII "12345678901234567890"; in base32:
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
// Time (s) and the RFC's 8-digit TOTP. Six digits (our configuration) are the same number modulo 10^6
// (RFC 4226 §5.3: the truncated value modulo 10^Digit), so its last six digits.
const VECTORS: Array<[number, string]> = [
  [59, '94287082'], [1111111109, '07081804'], [1111111111, '14050471'],
  [1234567890, '89005924'], [2000000000, '69279037'], [20000000000, '65353130'],
];

t.test('RFC 6238 Appendix B, SHA-1: the code at each time, and that code accepted at its step', async (t) => {
  for (const [seconds, rfc] of VECTORS) {
    const ms = seconds * 1000;
    t.equal(totpCodeAt(RFC_SECRET, ms), rfc.slice(-6), `T = ${seconds} s`);
    t.equal(matchingTimeStep(RFC_SECRET, rfc.slice(-6), ms), Math.floor(seconds / 30), `accepted at step ${Math.floor(seconds / 30)}`);
  }
});

t.test('the window: the previous and next step pass, two steps away does not', async (t) => {
  const secret = newTotpSecret();
  const now = 1_800_000_015_000;
  const step = timeStepAt(now);
  t.equal(matchingTimeStep(secret, totpCodeAt(secret, now - 30_000), now), step - 1, 'the previous step (a code typed as it changed)');
  t.equal(matchingTimeStep(secret, totpCodeAt(secret, now + 30_000), now), step + 1, 'the next step (a phone a little ahead)');
  t.equal(matchingTimeStep(secret, totpCodeAt(secret, now - 60_000), now), undefined, 'two steps old: refused');
  t.equal(matchingTimeStep(secret, totpCodeAt(secret, now + 60_000), now), undefined, 'two steps ahead: refused');
  t.equal(matchingTimeStep(newTotpSecret(), totpCodeAt(secret, now), now), undefined, 'another secret\'s code: refused');
});

t.test('malformed codes are refused before any HMAC', async (t) => {
  const now = 59_000;
  for (const code of ['', '28708', '2870822', '28708a', ' 287082', '287 082']) t.equal(matchingTimeStep(RFC_SECRET, code, now), undefined, JSON.stringify(code));
});

t.test('secrets are 160 random bits in base32; the URI names the issuer, the member and the parameters', async (t) => {
  const a = newTotpSecret();
  t.match(a, /^[A-Z2-7]{32}$/, '20 bytes = 32 base32 characters');
  t.not(a, newTotpSecret());
  const uri = new URL(totpUri(a, 'owner@acme.example'));
  t.equal(uri.protocol, 'otpauth:');
  t.equal(uri.host, 'totp');
  t.equal(decodeURIComponent(uri.pathname), '/Merchant Payments:owner@acme.example');
  t.same(Object.fromEntries(uri.searchParams), { issuer: 'Merchant Payments', secret: a, algorithm: 'SHA1', digits: '6', period: '30' });
});
