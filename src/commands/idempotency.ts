// Idempotency (CONTRACT.md §6), stored in PostgreSQL. The first request claims the key; a retry
// with the same body replays the stored outcome; another body is a conflict; a duplicate while the
// first runs is "in progress". A claim whose process died is taken over after its lease, keeping the
// same resource id, so the retried create finds what the first attempt may already have written.
import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Clock } from '../infra/clock.ts';
import { DomainError } from '../domain/errors.ts';
import { StatementBatcher } from '../infra/statement-batcher.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const LEASE_MS = 30_000;
/** 1 to 255 printable ASCII characters. */
export function validKey(key: string): boolean {
  return key.length >= 1 && key.length <= 255 && /^[\x20-\x7e]+$/.test(key);
}

/** Stable JSON: object keys sorted, so key order and whitespace do not change the hash. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as object).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method}\n${path}\n${canonicalJson(body)}`).digest('hex');
}

export type Claim =
  /** `fresh`: the resource id was drawn for this claim (no stream can have it yet); a take-over reuses one. */
  | { kind: 'run'; resourceId: string; fresh: boolean }
  | { kind: 'replay'; status: number; body: unknown };

interface Row {
  method: string;
  path: string;
  request_hash: string;
  resource_id: string;
  state: 'in_progress' | 'completed';
  response_status: number | null;
  response_body: unknown;
  locked_until: Date | string;
  expires_at: Date | string;
}

interface NewClaim { merchantId: string; key: string; method: string; path: string; hash: string }
interface Outcome { merchantId: string; key: string; status: number; body: unknown }

export class IdempotencyStore {
  /** New keys claimed by concurrent requests: one INSERT for all of them (statement-batcher.ts). */
  private readonly claims: StatementBatcher<NewClaim, Claim | undefined>;
  /** Outcomes recorded by concurrent requests: one UPDATE for all of them. */
  private readonly outcomes: StatementBatcher<Outcome, void>;

  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {
    this.claims = new StatementBatcher((items) => this.insertClaims(items));
    this.outcomes = new StatementBatcher((items) => this.completeAll(items));
  }

  async claim(merchantId: string, key: string, method: string, path: string, hash: string): Promise<Claim> {
    // A new key (nearly every request) is one statement on its own; only a key seen before needs
    // the transaction below, which locks its row to decide replay, conflict, wait or take-over.
    const first = await this.claims.submit({ merchantId, key, method, path, hash });
    if (first) return first;
    return this.knex.transaction(async (tx) => {
      const now = this.clock.now();
      const resourceId = randomUUID();

      const found = await tx.raw<{ rows: Row[] }>(
        'SELECT * FROM idempotency_keys WHERE merchant_id = ? AND key = ? FOR UPDATE',
        [merchantId, key],
      );
      const row = found.rows[0];
      if (!row) {
        // The row we collided with was expired and purged (purgeExpired) in between: the key is free,
        // unless another request with it got there first.
        const again = await this.insertClaim(tx, merchantId, key, method, path, hash);
        if (again) return again;
        throw new DomainError('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed');
      }
      if (new Date(row.expires_at).getTime() <= now.getTime()) {
        // Expired: the key is free again; this request starts afresh.
        await tx.raw(
          `UPDATE idempotency_keys SET method = ?, path = ?, request_hash = ?, resource_id = ?, state = 'in_progress',
             response_status = NULL, response_body = NULL, locked_until = ?, created_at = ?, expires_at = ?
           WHERE merchant_id = ? AND key = ?`,
          [method, path, hash, resourceId, new Date(now.getTime() + LEASE_MS), now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS), merchantId, key],
        );
        return { kind: 'run', resourceId, fresh: true };
      }
      if (row.request_hash !== hash || row.method !== method || row.path !== path) {
        throw new DomainError('idempotency_conflict', 'This Idempotency-Key was used with a different request');
      }
      if (row.state === 'completed') return { kind: 'replay', status: row.response_status!, body: row.response_body };
      if (new Date(row.locked_until).getTime() > now.getTime()) {
        throw new DomainError('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed');
      }
      // The first attempt's process is gone: take over with the same resource id.
      await tx.raw('UPDATE idempotency_keys SET locked_until = ? WHERE merchant_id = ? AND key = ?', [
        new Date(now.getTime() + LEASE_MS), merchantId, key,
      ]);
      return { kind: 'run', resourceId: row.resource_id, fresh: false };
    });
  }

  /** Claims a key nobody holds (a new resource id), or answers undefined when the key has a row. */
  private async insertClaim(db: Knex | Knex.Transaction, merchantId: string, key: string, method: string, path: string, hash: string): Promise<Claim | undefined> {
    const now = this.clock.now();
    const resourceId = randomUUID();
    const inserted = await db.raw<{ rows: unknown[] }>(
      `INSERT INTO idempotency_keys
         (merchant_id, key, method, path, request_hash, resource_id, state, locked_until, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, 'in_progress', ?, ?, ?)
       ON CONFLICT (merchant_id, key) DO NOTHING RETURNING key`,
      [merchantId, key, method, path, hash, resourceId, new Date(now.getTime() + LEASE_MS), now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS)],
    );
    return inserted.rows.length === 1 ? { kind: 'run', resourceId, fresh: true } : undefined;
  }

  /**
   * New keys in one statement: each gets its claim, or undefined when its key has a row (or another
   * request in the same batch has the same key: only the first of them is inserted).
   */
  private async insertClaims(items: NewClaim[]): Promise<Array<Claim | undefined>> {
    const now = this.clock.now();
    const id = (c: NewClaim) => `${c.merchantId}\n${c.key}`;
    const firsts = new Map<string, { claim: NewClaim; resourceId: string }>();
    for (const c of items) if (!firsts.has(id(c))) firsts.set(id(c), { claim: c, resourceId: randomUUID() });
    const rows = [...firsts.values()];
    const inserted = await this.knex.raw<{ rows: Array<{ merchant_id: string; key: string }> }>(
      `INSERT INTO idempotency_keys
         (merchant_id, key, method, path, request_hash, resource_id, state, locked_until, created_at, expires_at)
       SELECT m, k, me, p, h, r, 'in_progress', ?, ?, ? FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::uuid[]) AS x(m, k, me, p, h, r)
       ON CONFLICT (merchant_id, key) DO NOTHING RETURNING merchant_id, key`,
      [new Date(now.getTime() + LEASE_MS), now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
        rows.map((r) => r.claim.merchantId), rows.map((r) => r.claim.key), rows.map((r) => r.claim.method),
        rows.map((r) => r.claim.path), rows.map((r) => r.claim.hash), rows.map((r) => r.resourceId)],
    );
    const won = new Set(inserted.rows.map((r) => `${r.merchant_id}\n${r.key}`));
    return items.map((c) => {
      const first = firsts.get(id(c))!;
      return first.claim === c && won.has(id(c)) ? { kind: 'run', resourceId: first.resourceId, fresh: true } : undefined;
    });
  }

  async complete(merchantId: string, key: string, status: number, body: unknown): Promise<void> {
    await this.outcomes.submit({ merchantId, key, status, body });
  }

  /** Outcomes in one statement (a key appears once per batch: its claim is held by one request). */
  private async completeAll(items: Outcome[]): Promise<void[]> {
    await this.knex.raw(
      `UPDATE idempotency_keys k SET state = 'completed', response_status = x.s, response_body = x.b::json
       FROM unnest(?::uuid[], ?::text[], ?::int[], ?::text[]) AS x(m, k, s, b)
       WHERE k.merchant_id = x.m AND k.key = x.k`,
      [items.map((o) => o.merchantId), items.map((o) => o.key), items.map((o) => o.status), items.map((o) => JSON.stringify(o.body))],
    );
    return items.map(() => undefined);
  }

  /** A 5xx is not an outcome: forget the claim so a retry can succeed. */
  async release(merchantId: string, key: string): Promise<void> {
    await this.knex.raw(`DELETE FROM idempotency_keys WHERE merchant_id = ? AND key = ? AND state = 'in_progress'`, [merchantId, key]);
  }

  /**
   * Deletes up to `limit` keys past their 24 hours (an expired key is already free for a new request:
   * this only keeps the table from growing). Rows a claim holds are skipped. Returns how many went;
   * run by the `idempotency-purge` job (workers/idempotency-purge.ts).
   */
  async purgeExpired(limit = 10_000): Promise<number> {
    const r = await this.knex.raw<{ rows: unknown[] }>(
      `DELETE FROM idempotency_keys WHERE (merchant_id, key) IN (
         SELECT merchant_id, key FROM idempotency_keys WHERE expires_at < ? LIMIT ? FOR UPDATE SKIP LOCKED)
       RETURNING key`,
      [this.clock.now(), limit],
    );
    return r.rows.length;
  }
}
