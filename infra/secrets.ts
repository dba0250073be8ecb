// Secrets at rest. API secrets are kept only as a keyed hash (HMAC-SHA256 under the server key) and
// compared in constant time. Webhook signing secrets must be usable to sign, so they are kept
// encrypted (AES-256-GCM under a key derived from the same server key), never in clear.
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual, hkdfSync } from 'node:crypto';

export class Secrets {
  private readonly hashKey: Buffer;
  private readonly encKey: Buffer;

  constructor(serverKey: string) {
    if (serverKey.length < 16) throw new Error('server key too short');
    this.hashKey = Buffer.from(hkdfSync('sha256', serverKey, 'merchant-payments', 'api-secret-hash', 32));
    this.encKey = Buffer.from(hkdfSync('sha256', serverKey, 'merchant-payments', 'secret-encryption', 32));
  }

  hash(secret: string): string {
    return createHmac('sha256', this.hashKey).update(secret).digest('hex');
  }

  /** Constant-time check of a presented secret against a stored hash. */
  matches(secret: string, storedHash: string): boolean {
    const a = Buffer.from(this.hash(secret), 'hex');
    const b = Buffer.from(storedHash, 'hex');
    return a.length === b.length && timingSafeEqual(a, b);
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encKey, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
  }

  decrypt(sealed: string): string {
    const [v, iv, tag, data] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || data === undefined) throw new Error('unreadable sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.encKey, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/** A random token with a readable prefix, e.g. `sk_live_…`. */
export function randomToken(prefix: string, bytes = 24): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}
