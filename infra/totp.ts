// Time-based one-time passwords (RFC 6238) for the dashboard's two-factor sign-in, through the
// `otpauth` package (HOTP truncation and the HMAC are not ours to get wrong). One configuration for
// every member: SHA-1, 6 digits, 30-second steps, what every authenticator app reads from an
// otpauth:// URI (several apps ignore other algorithms and periods and show wrong codes).
import { Secret, TOTP } from 'otpauth';

export const TOTP_ISSUER = 'Merchant Payments';
const ALGORITHM = 'SHA1';
const DIGITS = 6;
export const TOTP_PERIOD_SECONDS = 30;
/** One step either side: a phone's clock a little off, or a code typed as it changed (RFC 6238 §5.2). */
const WINDOW_STEPS = 1;
/** 160 bits, the HMAC-SHA-1 block's natural key size (RFC 4226 §4 asks for at least 128). */
const SECRET_BYTES = 20;

/** A new random secret, in base32 (what the URI carries and a member may type). */
export const newTotpSecret = (): string => new Secret({ size: SECRET_BYTES }).base32;

const totpOf = (secretBase32: string, label = '') =>
  new TOTP({ issuer: TOTP_ISSUER, label, secret: Secret.fromBase32(secretBase32), algorithm: ALGORITHM, digits: DIGITS, period: TOTP_PERIOD_SECONDS });

/** The otpauth:// URI an authenticator app reads from the QR code; the label is the member's e-mail address. */
export const totpUri = (secretBase32: string, label: string): string => totpOf(secretBase32, label).toString();

/** The time step (RFC 6238 T) an instant falls in. */
export const timeStepAt = (nowMs: number): number => TOTP.counter({ period: TOTP_PERIOD_SECONDS, timestamp: nowMs });

/** The code of the step `nowMs` falls in (for tests and the browser test's "phone"). */
export const totpCodeAt = (secretBase32: string, nowMs: number): string => totpOf(secretBase32).generate({ timestamp: nowMs });

/**
 * The time step whose code `code` is, within the window around `nowMs`; undefined when it is none of
 * them. The caller refuses a step already used (no replay).
 */
export function matchingTimeStep(secretBase32: string, code: string, nowMs: number): number | undefined {
  if (!/^[0-9]{6}$/.test(code)) return undefined;
  const delta = totpOf(secretBase32).validate({ token: code, timestamp: nowMs, window: WINDOW_STEPS });
  return delta === null ? undefined : timeStepAt(nowMs) + delta;
}
