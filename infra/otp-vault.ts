// One-time passwords between POST /payins (or /transfers) and the provider: sealed with the server
// key (AES-256-GCM), kept only until the gateway has handed them to the provider, then deleted;
// stale ones are purged. Never in events, responses or logs.
//
// Each create attempt seals in a row of its own (reference, attempt): two attempts under one
// Idempotency-Key share the reference (the payment's id), and the one that fails for certain must
// delete only its own row, never the OTP a committed payment of the other attempt needs (issue 28).
// The gateway reads any row of the reference (they hold the same OTP: the same request body) and
// deletes them all once the provider has it.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Clock } from './clock.ts';
import type { Secrets } from './secrets.ts';

/** A sealed OTP older than this is useless (the quote behind it has expired) and purged. */
export const OTP_TTL_MS = 15 * 60 * 1000;

/** One attempt's sealed OTP: what it may delete when it knows its payment was not created. */
export interface SealedOtp {
  reference: string;
  attempt: string;
}

export class OtpVault {
  constructor(
    private readonly knex: Knex,
    private readonly secrets: Secrets,
    private readonly clock: Clock,
  ) {}

  /** Keeps `otp` sealed for the leg `reference`, in this attempt's own row. */
  async seal(reference: string, otp: string): Promise<SealedOtp> {
    const now = this.clock.now();
    const attempt = randomUUID();
    await this.knex.raw(
      'INSERT INTO otp_vault (reference, attempt, sealed, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
      [reference, attempt, this.secrets.encrypt(otp), now, new Date(now.getTime() + OTP_TTL_MS)],
    );
    return { reference, attempt };
  }

  /** The OTP in clear, for the provider call only; undefined when none (or expired). */
  async peek(reference: string): Promise<string | undefined> {
    const row = (await this.knex('otp_vault').where({ reference }).where('expires_at', '>', this.clock.now())
      .orderBy('created_at', 'desc').first('sealed')) as { sealed: string } | undefined;
    return row ? this.secrets.decrypt(row.sealed) : undefined;
  }

  /** The provider has it: every attempt's row for the reference goes. */
  async discard(reference: string): Promise<void> {
    await this.knex('otp_vault').where({ reference }).delete();
  }

  /** This attempt certainly created nothing: its own row goes, another attempt's stays. */
  async discardAttempt(sealed: SealedOtp): Promise<void> {
    await this.knex('otp_vault').where({ reference: sealed.reference, attempt: sealed.attempt }).delete();
  }

  async purgeExpired(): Promise<number> {
    return this.knex('otp_vault').where('expires_at', '<', this.clock.now()).delete();
  }
}

export const otpVault = (s: { knex: Knex; secrets: Secrets; clock: Clock }) => new OtpVault(s.knex, s.secrets, s.clock);
