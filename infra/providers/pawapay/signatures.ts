// Verification of pawaPay's signed callbacks: HTTP Message Signatures (RFC 9421) over a body bound by
// its Content-Digest (RFC 9530), as pawaPay documents them (docs.pawapay.io/v2/docs/signatures).
//
// A signed callback carries
//   Content-Digest:  sha-512=:<base64>:            (or sha-256)
//   Signature-Date:  2026-01-01T10:00:00.123Z      (pawaPay's own header, covered by the signature)
//   Signature-Input: sig-pp=("@method" "@authority" "@path" "signature-date" "content-digest"
//                    "content-type");alg="ecdsa-p256-sha256";keyid="HTTP_EC_P256_KEY:1";created=…;expires=…
//   Signature:       sig-pp=:<base64>:
// and is verified with the key named by `keyid` among those pawaPay publishes (GET /v2/public-key/http).
// pawaPay's ECDSA signatures are ASN.1 DER, where RFC 9421 says raw r‖s: both are accepted, told
// apart by their length. The algorithms are the four pawaPay's own verifier knows.
//
// Any doubt fails the check (the caller then ignores the callback; polling settles the leg anyway):
// a component we cannot resolve, a digest that does not match, a signature that does not cover the
// body's digest, an expired signature, an unknown key.
import { constants, createHash, timingSafeEqual, verify, type KeyObject } from 'node:crypto';

/** The callback as received: what the signature base is built from. */
export interface SignedMessage {
  method: string;
  authority: string;
  /** The path and query as received. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
}

export type KeyLookup = (keyId: string) => Promise<KeyObject | undefined>;

export type SignatureCheck = { kind: 'unsigned' } | { kind: 'verified'; keyId: string } | { kind: 'failed'; why: string };

/** How far a signature's `expires` and `created` may be off from our clock. */
const CLOCK_SKEW_S = 60;

function header(headers: SignedMessage['headers'], name: string): string | undefined {
  const found = Object.entries(headers).find(([k]) => k.toLowerCase() === name);
  const v = found?.[1];
  if (v === undefined) return undefined;
  return (Array.isArray(v) ? v.map((s) => s.trim()).join(', ') : v.trim());
}

/** Checks a callback's signature; `unsigned` when it carries neither Signature nor Signature-Input. */
export async function checkSignature(msg: SignedMessage, keyFor: KeyLookup, nowMs: number): Promise<SignatureCheck> {
  const signature = header(msg.headers, 'signature');
  const input = header(msg.headers, 'signature-input');
  if (signature === undefined && input === undefined) return { kind: 'unsigned' };
  if (signature === undefined || input === undefined) return failed('Signature and Signature-Input must come together');
  const chosen = chooseSignature(input, signature);
  if (typeof chosen === 'string') return failed(chosen);
  const why = digestProblem(msg) ?? paramsProblem(chosen.input, nowMs);
  if (why) return failed(why);
  const base = signatureBase(msg, chosen.input);
  if (base.why !== undefined) return failed(base.why);
  const keyId = chosen.input.params.get('keyid') as string;
  const key = await keyFor(keyId);
  if (!key) return failed(`no public key ${keyId}`);
  const alg = chosen.input.params.get('alg') as string;
  if (!verifies(alg, key, Buffer.from(base.text, 'utf8'), chosen.bytes)) return failed('the signature does not verify');
  return { kind: 'verified', keyId };
}

const failed = (why: string): SignatureCheck => ({ kind: 'failed', why });

/** The signature to check: pawaPay's label `sig-pp` when present, else the first label both headers carry. */
function chooseSignature(inputHeader: string, signatureHeader: string): { input: Member; bytes: Buffer } | string {
  const inputs = parseDictionary(inputHeader);
  const signatures = parseDictionary(signatureHeader);
  if (!inputs || !signatures) return 'Signature or Signature-Input is not a structured dictionary';
  const labels = [...inputs.keys()].filter((l) => signatures.has(l));
  const label = labels.includes('sig-pp') ? 'sig-pp' : labels[0];
  if (label === undefined) return 'no signature label in both Signature and Signature-Input';
  const input = inputs.get(label)!;
  const bytes = signatures.get(label)!.value;
  if (!Array.isArray(input.value)) return 'Signature-Input is not an inner list';
  if (!Buffer.isBuffer(bytes)) return 'Signature is not a byte sequence';
  return { input, bytes };
}

/** The body must match its Content-Digest, and the signature must cover that digest. */
function digestProblem(msg: SignedMessage): string | undefined {
  const value = header(msg.headers, 'content-digest');
  const digests = value === undefined ? undefined : parseDictionary(value);
  if (!digests) return 'no readable Content-Digest';
  const known = [...digests].filter(([alg]) => alg === 'sha-256' || alg === 'sha-512');
  if (known.length === 0) return 'Content-Digest has no sha-256 or sha-512';
  for (const [alg, member] of known) {
    const expected = createHash(alg === 'sha-256' ? 'sha256' : 'sha512').update(msg.rawBody).digest();
    const got = member.value;
    if (!Buffer.isBuffer(got) || got.length !== expected.length || !timingSafeEqual(got, expected)) {
      return 'the body does not match its Content-Digest';
    }
  }
  return undefined;
}

/** Parameters pawaPay always sets: alg and keyid; created and expires, when present, within the clock skew. */
function paramsProblem(input: Member, nowMs: number): string | undefined {
  const components = (input.value as Member[]).map((c) => c.value);
  if (!components.includes('content-digest')) return 'the signature does not cover content-digest';
  const { params } = input;
  if (typeof params.get('alg') !== 'string') return 'no alg';
  if (typeof params.get('keyid') !== 'string') return 'no keyid';
  const now = nowMs / 1000;
  const expires = params.get('expires');
  const created = params.get('created');
  if (expires !== undefined && (typeof expires !== 'number' || now > expires + CLOCK_SKEW_S)) return 'the signature has expired';
  if (created !== undefined && (typeof created !== 'number' || created > now + CLOCK_SKEW_S)) return 'the signature was created in the future';
  return undefined;
}

/** The signature base (RFC 9421 §2.5), or why it cannot be built (a covered component we cannot resolve). */
function signatureBase(msg: SignedMessage, input: Member): { text: string; why?: undefined } | { why: string } {
  const lines: string[] = [];
  for (const item of input.value as Member[]) {
    const name = item.value;
    if (typeof name !== 'string' || item.params.size > 0) return { why: 'a covered component has parameters or is not a string' };
    const value = componentValue(msg, name);
    if (value === undefined) return { why: `cannot resolve covered component ${name}` };
    lines.push(`"${name}": ${value}`);
  }
  lines.push(`"@signature-params": ${serializeInnerList(input)}`);
  return { text: lines.join('\n') };
}

function componentValue(msg: SignedMessage, name: string): string | undefined {
  const q = msg.path.indexOf('?');
  const path = q < 0 ? msg.path : msg.path.slice(0, q);
  switch (name) {
    case '@method': return msg.method.toUpperCase();
    case '@authority': return msg.authority.toLowerCase();
    case '@path': return path;
    case '@query': return q < 0 ? '?' : msg.path.slice(q);
    case '@request-target': return msg.path;
    default: return name.startsWith('@') ? undefined : header(msg.headers, name);
  }
}

/** The verification of pawaPay's algorithms, each only with a key of its own type. */
function verifies(alg: string, key: KeyObject, data: Buffer, signature: Buffer): boolean {
  const curve = key.asymmetricKeyDetails?.namedCurve;
  try {
    switch (alg) {
      case 'ecdsa-p256-sha256':
        return key.asymmetricKeyType === 'ec' && curve === 'prime256v1'
          && verify('sha256', data, { key, dsaEncoding: signature.length === 64 ? 'ieee-p1363' : 'der' }, signature);
      case 'ecdsa-p384-sha384':
        return key.asymmetricKeyType === 'ec' && curve === 'secp384r1'
          && verify('sha384', data, { key, dsaEncoding: signature.length === 96 ? 'ieee-p1363' : 'der' }, signature);
      case 'rsa-v1_5-sha256':
        return key.asymmetricKeyType === 'rsa' && verify('sha256', data, key, signature);
      case 'rsa-pss-sha512':
        return (key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'rsa-pss')
          && verify('sha512', data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 }, signature);
      default:
        return false;
    }
  } catch {
    return false; // a malformed signature or key: not verified
  }
}

// --- Structured Field Values (RFC 8941), as far as signatures need them --------------------------
// Signature-Input, Signature and Content-Digest are dictionaries. The signature base repeats the
// signature's parameters serialized canonically, so they are parsed into values and serialized
// again rather than copied as received.

class Token {
  constructor(readonly name: string) {}
}
class Decimal {
  constructor(readonly value: number) {}
}
type Bare = string | number | boolean | Buffer | Token | Decimal;
interface Member {
  value: Bare | Member[];
  params: Map<string, Bare>;
}

class SyntaxProblem extends Error {}

class Cursor {
  i = 0;
  constructor(readonly s: string) {}
  ch(): string | undefined { return this.s[this.i]; }
  match(re: RegExp): string {
    const m = re.exec(this.s.slice(this.i));
    if (!m) throw new SyntaxProblem(`unexpected ${this.ch() ?? 'end'} at ${this.i}`);
    this.i += m[0].length;
    return m[0];
  }
  skip(re: RegExp): void {
    const m = re.exec(this.s.slice(this.i));
    if (m) this.i += m[0].length;
  }
}

/** A dictionary by its keys, in order; undefined when the text is not one. */
function parseDictionary(text: string): Map<string, Member> | undefined {
  const c = new Cursor(text);
  const out = new Map<string, Member>();
  try {
    c.skip(/^ +/);
    while (c.i < c.s.length) {
      const key = c.match(/^[a-z*][a-z0-9_\-.*]*/);
      if (c.ch() === '=') {
        c.i++;
        out.set(key, c.ch() === '(' ? innerList(c) : item(c));
      } else {
        out.set(key, { value: true, params: parameters(c) });
      }
      c.skip(/^[ \t]*/);
      if (c.i >= c.s.length) break;
      c.match(/^,[ \t]*/);
      if (c.i >= c.s.length) throw new SyntaxProblem('trailing comma');
    }
  } catch (err) {
    if (err instanceof SyntaxProblem) return undefined;
    throw err;
  }
  return out;
}

function innerList(c: Cursor): Member {
  c.match(/^\(/);
  const items: Member[] = [];
  for (;;) {
    c.skip(/^ +/);
    if (c.ch() === ')') break;
    items.push(item(c));
    if (c.ch() !== ' ' && c.ch() !== ')') throw new SyntaxProblem('inner list items must be separated by spaces');
  }
  c.i++;
  return { value: items, params: parameters(c) };
}

function item(c: Cursor): Member {
  return { value: bareItem(c), params: parameters(c) };
}

function parameters(c: Cursor): Map<string, Bare> {
  const params = new Map<string, Bare>();
  while (c.ch() === ';') {
    c.i++;
    c.skip(/^ +/);
    const key = c.match(/^[a-z*][a-z0-9_\-.*]*/);
    let value: Bare = true;
    if (c.ch() === '=') {
      c.i++;
      value = bareItem(c);
    }
    params.set(key, value);
  }
  return params;
}

function bareItem(c: Cursor): Bare {
  const ch = c.ch() ?? '';
  if (ch === '"') return JSON.parse(c.match(/^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*"/)) as string;
  if (ch === ':') return Buffer.from(c.match(/^:[A-Za-z0-9+/=]*:/).slice(1, -1), 'base64');
  if (ch === '?') return c.match(/^\?[01]/) === '?1';
  if (/[A-Za-z*]/.test(ch)) return new Token(c.match(/^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/));
  const number = c.match(/^-?\d{1,15}(?:\.\d{1,3})?/);
  return number.includes('.') ? new Decimal(Number(number)) : Number(number);
}

function serializeBare(v: Bare): string {
  if (typeof v === 'string') return `"${v.replace(/[\\"]/g, (m) => `\\${m}`)}"`;
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? '?1' : '?0';
  if (Buffer.isBuffer(v)) return `:${v.toString('base64')}:`;
  if (v instanceof Token) return v.name;
  const d = String(Math.round(v.value * 1000) / 1000);
  return d.includes('.') ? d : `${d}.0`;
}

function serializeParams(params: Map<string, Bare>): string {
  return [...params].map(([k, v]) => (v === true ? `;${k}` : `;${k}=${serializeBare(v)}`)).join('');
}

function serializeInnerList(list: Member): string {
  const items = (list.value as Member[]).map((i) => serializeBare(i.value as Bare) + serializeParams(i.params));
  return `(${items.join(' ')})${serializeParams(list.params)}`;
}
