// One-time passwords between POST /payins (or /transfers) and the provider: sealed with the server
// key (AES-256-GCM), kept only until the gateway has handed them to the provider, then deleted;
// stale ones are purged. Never in events, responses or logs.
import type { Knex } from 'knex';
import type { Clock } from './clock.ts';
import type { Secrets } from './secrets.ts';

/** A sealed OTP older than this is useless (the quote behind it has expired) and purged. */
export const OTP_TTL_MS = 15 * 60 * 1000;

export class OtpVault {
  constructor(
    private readonly knex: Knex,
    private readonly secrets: Secrets,
    private readonly clock: Clock,
  ) {}

  /** Keeps `otp` sealed for the leg `reference` (a retry re-seals). */
  async seal(reference: string, otp: string): Promise<void> {
    const now = this.clock.now();
    await this.knex.raw(
      `INSERT INTO otp_vault (reference, sealed, created_at, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (reference) DO UPDATE SET sealed = excluded.sealed, created_at = excluded.created_at, expires_at = excluded.expires_at`,
      [reference, this.secrets.encrypt(otp), now, new Date(now.getTime() + OTP_TTL_MS)],
    );
  }

  /** The OTP in clear, for the provider call only; undefined when none (or expired). */
  async peek(reference: string): Promise<string | undefined> {
    const row = (await this.knex('otp_vault').where({ reference }).first('sealed', 'expires_at')) as { sealed: string; expires_at: Date | string } | undefined;
    if (!row || new Date(row.expires_at).getTime() <= this.clock.now().getTime()) return undefined;
    return this.secrets.decrypt(row.sealed);
  }

  async discard(reference: string): Promise<void> {
    await this.knex('otp_vault').where({ reference }).delete();
  }

  async purgeExpired(): Promise<number> {
    return this.knex('otp_vault').where('expires_at', '<', this.clock.now()).delete();
  }
}

export const otpVault = (s: { knex: Knex; secrets: Secrets; clock: Clock }) => new OtpVault(s.knex, s.secrets, s.clock);
