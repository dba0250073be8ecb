// Dashboard passwords: scrypt (memory-hard: N = 2^15, r = 8, p = 1, i.e. 32 MiB and ~50-100 ms per
// hash), a random 16-byte salt per hash, compared in constant time. The stored form names its
// parameters, so they can be raised later and old hashes still verify:
//   scrypt$<log2 N>$<r>$<p>$<salt, base64url>$<64-byte key, base64url>
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const LOG2_N = 15;
const R = 8;
const P = 1;
const KEY_BYTES = 64;
const SALT_BYTES = 16;
/** Passwords longer than this are refused before hashing (bounds the work one request can cause). */
export const MAX_PASSWORD_CHARS = 200;
export const MIN_PASSWORD_CHARS = 12;

function derive(password: string, salt: Buffer, log2n: number, r: number, p: number): Promise<Buffer> {
  const N = 2 ** log2n;
  // scrypt needs 128·N·r bytes; Node's default cap (32 MiB) is exactly that at N = 2^15, r = 8: room above it.
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, LOG2_N, R, P);
  return ['scrypt', LOG2_N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

const FORMAT = /^scrypt\$([0-9]{1,2})\$([0-9]{1,2})\$([0-9]{1,2})\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = FORMAT.exec(stored);
  if (!m) return false;
  const [log2n, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (log2n < 10 || log2n > 20 || r < 1 || r > 32 || p < 1 || p > 4) return false;
  const expected = Buffer.from(m[5]!, 'base64url');
  const key = await derive(password, Buffer.from(m[4]!, 'base64url'), log2n, r, p);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** Spends the same time as a real check, for an address with no user (no timing hint that it exists). */
let dummyHash: Promise<string> | undefined;
export async function verifyAgainstNothing(password: string): Promise<false> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  await verifyPassword(password, await dummyHash);
  return false;
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string, email: string): string | undefined {
  if (password.length < MIN_PASSWORD_CHARS) return `Use at least ${MIN_PASSWORD_CHARS} characters.`;
  if (password.length > MAX_PASSWORD_CHARS) return `Use at most ${MAX_PASSWORD_CHARS} characters.`;
  if (password.toLowerCase() === email.toLowerCase()) return 'Do not use your e-mail address as your password.';
  return undefined;
}
