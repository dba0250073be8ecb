// Idempotency (CONTRACT.md §6), stored in PostgreSQL. The first request claims the key; a retry
// with the same body replays the stored outcome; another body is a conflict; a duplicate while the
// first runs is "in progress".
//
// One key, one resource, whatever the timing (issue 28). A claim carries a token: only its holder
// can renew, complete, release or give it up, so an attempt that was taken over can no longer
// delete or overwrite the key under the attempt that took it. The holder renews its lease while it
// runs, so a live request is never taken over, however long its append waits. A claim whose holder
// died, or gave it up after a 5xx, is taken over with the same resource id, so the retry finds what
// the earlier attempt committed (an append whose commit is in doubt included) instead of creating a
// second resource. The resource id is dropped only when the key expires, or when a fresh claim's
// request was refused for its body before anything was written.
//
// Why not the key in the same transaction as the events (Formance's way): the event store may be
// KurrentDB, outside PostgreSQL, and a business refusal is an outcome to store with no event to
// write beside it; fenced, renewed claims give the same guarantee on every backend.
import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Clock } from '../infra/clock.ts';
import type { Secrets } from '../infra/secrets.ts';
import { DomainError } from '../domain/errors.ts';
import { StatementBatcher } from '../infra/statement-batcher.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
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

const inProgress = () => new DomainError('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed');

/** Marks a keyed request hash (rows written before it hold an unkeyed SHA-256 until they expire). */
const KEYED = 'k1:';

/**
 * A request's fingerprint under its key: an HMAC under the server key, so nothing sent can be
 * recovered from it by trying values (an OTP has only 10^4 to 10^8; CONTRACT §17).
 */
export function requestHash(secrets: Secrets, method: string, path: string, body: unknown): string {
  return KEYED + secrets.hash(`idempotency-request\n${method}\n${path}\n${canonicalJson(body)}`);
}

/** The unkeyed hash that rows written before the keyed one hold (compared only with such a row, never stored again). */
export function unkeyedRequestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method}\n${path}\n${canonicalJson(body)}`).digest('hex');
}

/** Whether a stored hash is this request's: keyed, or (a row from before keyed hashes) the unkeyed one. */
function sameRequest(stored: string, hash: string, unkeyed: (() => string) | undefined): boolean {
  if (stored === hash) return true;
  return !stored.startsWith(KEYED) && unkeyed !== undefined && stored === unkeyed();
}

/** A claim this request holds: only its `token` can renew, complete, release or relinquish it (a fence). */
export interface HeldClaim {
  kind: 'run';
  merchantId: string;
  key: string;
  resourceId: string;
  /**
   * The resource id was drawn for this claim, so no stream can have it yet. False on a take-over: an
   * earlier attempt under the same key may have written it (the handler answers what it finds).
   */
  fresh: boolean;
  token: string;
}

export type Claim = HeldClaim | { kind: 'replay'; status: number; body: unknown };

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
interface Outcome { claim: HeldClaim; status: number; body: unknown }

/** A lease long enough that a live holder renews it many times before it could lapse (every third). */
export const DEFAULT_LEASE_MS = 30_000;

export class IdempotencyStore {
  /** New keys claimed by concurrent requests: one INSERT for all of them (statement-batcher.ts). */
  private readonly claims: StatementBatcher<NewClaim, Claim | undefined>;
  /** Outcomes recorded by concurrent requests: one UPDATE for all of them. */
  private readonly outcomes: StatementBatcher<Outcome, boolean>;

  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    /** How long a claim holds its key without a renewal; a live holder renews it (keepAlive). */
    readonly leaseMs = DEFAULT_LEASE_MS,
  ) {
    this.claims = new StatementBatcher((items) => this.insertClaims(items));
    this.outcomes = new StatementBatcher((items) => this.completeAll(items));
  }

  private leaseEnd(): Date {
    return new Date(this.clock.now().getTime() + this.leaseMs);
  }

  /** `unkeyed`: the request's unkeyed hash, asked only when the key's row predates keyed hashes. */
  async claim(merchantId: string, key: string, method: string, path: string, hash: string, unkeyed?: () => string): Promise<Claim> {
    // A new key (nearly every request) is one statement on its own; only a key seen before needs
    // the transaction below, which locks its row to decide replay, conflict, wait or take-over.
    const first = await this.claims.submit({ merchantId, key, method, path, hash });
    if (first) return first;
    return this.knex.transaction(async (tx) => {
      const now = this.clock.now();
      const found = await tx.raw<{ rows: Row[] }>(
        'SELECT * FROM idempotency_keys WHERE merchant_id = ? AND key = ? FOR UPDATE',
        [merchantId, key],
      );
      const row = found.rows[0];
      if (!row) {
        // The row we collided with was expired and purged (purgeExpired) in between: the key is free,
        // unless another request with it got there first.
        const again = await this.insertClaim(tx, { merchantId, key, method, path, hash });
        if (again) return again;
        throw inProgress();
      }
      const token = randomUUID();
      if (new Date(row.expires_at).getTime() <= now.getTime()) {
        // Expired: the key is free again; this request starts afresh.
        const resourceId = randomUUID();
        await tx.raw(
          `UPDATE idempotency_keys SET method = ?, path = ?, request_hash = ?, resource_id = ?, state = 'in_progress', claim_token = ?,
             response_status = NULL, response_body = NULL, locked_until = ?, created_at = ?, expires_at = ?
           WHERE merchant_id = ? AND key = ?`,
          [method, path, hash, resourceId, token, this.leaseEnd(), now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS), merchantId, key],
        );
        return { kind: 'run', merchantId, key, resourceId, fresh: true, token };
      }
      if (!sameRequest(row.request_hash, hash, unkeyed) || row.method !== method || row.path !== path) {
        throw new DomainError('idempotency_conflict', 'This Idempotency-Key was used with a different request');
      }
      if (row.state === 'completed') return { kind: 'replay', status: row.response_status!, body: row.response_body };
      if (new Date(row.locked_until).getTime() > now.getTime()) throw inProgress();
      // Its holder is gone (died, or gave the claim up after a 5xx): take over with the same resource
      // id, so this attempt finds whatever the earlier one committed. The new token fences the old
      // holder out, should it still be running: it can no longer complete or release the key.
      await tx.raw('UPDATE idempotency_keys SET locked_until = ?, claim_token = ? WHERE merchant_id = ? AND key = ?', [
        this.leaseEnd(), token, merchantId, key,
      ]);
      return { kind: 'run', merchantId, key, resourceId: row.resource_id, fresh: false, token };
    });
  }

  /** Claims a key nobody holds (a new resource id), or answers undefined when the key has a row. */
  private async insertClaim(db: Knex | Knex.Transaction, c: NewClaim): Promise<Claim | undefined> {
    const now = this.clock.now();
    const resourceId = randomUUID();
    const token = randomUUID();
    const inserted = await db.raw<{ rows: unknown[] }>(
      `INSERT INTO idempotency_keys
         (merchant_id, key, method, path, request_hash, resource_id, state, claim_token, locked_until, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, 'in_progress', ?, ?, ?, ?)
       ON CONFLICT (merchant_id, key) DO NOTHING RETURNING key`,
      [c.merchantId, c.key, c.method, c.path, c.hash, resourceId, token, this.leaseEnd(), now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS)],
    );
    return inserted.rows.length === 1 ? { kind: 'run', merchantId: c.merchantId, key: c.key, resourceId, fresh: true, token } : undefined;
  }

  /**
   * New keys in one statement: each gets its claim, or undefined when its key has a row (or another
   * request in the same batch has the same key: only the first of them is inserted).
   */
  private async insertClaims(items: NewClaim[]): Promise<Array<Claim | undefined>> {
    const now = this.clock.now();
    const id = (c: NewClaim) => `${c.merchantId}\n${c.key}`;
    const firsts = new Map<string, { claim: NewClaim; resourceId: string; token: string }>();
    for (const c of items) if (!firsts.has(id(c))) firsts.set(id(c), { claim: c, resourceId: randomUUID(), token: randomUUID() });
    const rows = [...firsts.values()];
    const inserted = await this.knex.raw<{ rows: Array<{ merchant_id: string; key: string }> }>(
      `INSERT INTO idempotency_keys
         (merchant_id, key, method, path, request_hash, resource_id, claim_token, state, locked_until, created_at, expires_at)
       SELECT m, k, me, p, h, r, t, 'in_progress', ?, ?, ?
         FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::uuid[], ?::uuid[]) AS x(m, k, me, p, h, r, t)
       ON CONFLICT (merchant_id, key) DO NOTHING RETURNING merchant_id, key`,
      [this.leaseEnd(), now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
        rows.map((r) => r.claim.merchantId), rows.map((r) => r.claim.key), rows.map((r) => r.claim.method),
        rows.map((r) => r.claim.path), rows.map((r) => r.claim.hash), rows.map((r) => r.resourceId), rows.map((r) => r.token)],
    );
    const won = new Set(inserted.rows.map((r) => `${r.merchant_id}\n${r.key}`));
    return items.map((c) => {
      const first = firsts.get(id(c))!;
      if (first.claim !== c || !won.has(id(c))) return undefined;
      return { kind: 'run', merchantId: c.merchantId, key: c.key, resourceId: first.resourceId, fresh: true, token: first.token };
    });
  }

  /** Extends the lease of a claim still held by `claim.token`; false when it is no longer this holder's. */
  async renew(claim: HeldClaim): Promise<boolean> {
    const r = await this.knex.raw<{ rows: unknown[] }>(
      `UPDATE idempotency_keys SET locked_until = ? WHERE merchant_id = ? AND key = ? AND claim_token = ? AND state = 'in_progress' RETURNING key`,
      [this.leaseEnd(), claim.merchantId, claim.key, claim.token],
    );
    return r.rows.length === 1;
  }

  /**
   * Renews the claim every third of its lease until the returned function is called, so a request
   * that runs long (an append waiting on a lock) is never taken over while its process lives. A
   * failed renewal is tried again at the next tick; a lost claim (taken over) stops the renewals.
   */
  keepAlive(claim: HeldClaim, onError: (err: unknown) => void): () => void {
    let stopped = false;
    const timer = setInterval(() => {
      this.renew(claim).then((held) => {
        if (!held) clearInterval(timer);
      }, (err: unknown) => { if (!stopped) onError(err); });
    }, Math.max(1, Math.floor(this.leaseMs / 3)));
    timer.unref();
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }

  /** What the key holds now: its stored outcome, or still in progress (another attempt's), or nothing. */
  async current(merchantId: string, key: string): Promise<{ kind: 'replay'; status: number; body: unknown } | { kind: 'in_progress' } | undefined> {
    const row = (await this.knex('idempotency_keys').where({ merchant_id: merchantId, key })
      .first('state', 'response_status', 'response_body')) as Pick<Row, 'state' | 'response_status' | 'response_body'> | undefined;
    if (!row) return undefined;
    return row.state === 'completed' ? { kind: 'replay', status: row.response_status!, body: row.response_body } : { kind: 'in_progress' };
  }

  /** Stores the outcome, if `claim` still holds the key (false: another attempt took it over). */
  complete(claim: HeldClaim, status: number, body: unknown): Promise<boolean> {
    return this.outcomes.submit({ claim, status, body });
  }

  /**
   * Outcomes in one statement, each fenced by its claim's token. They travel as one JSON document:
   * as a `text[]` of bodies, node-postgres copied every body twice more to escape its quotes for the
   * array literal, about a tenth of what a create allocated (bench/PROFILE.md §32). Each body is in
   * it as a string (its JSON text), cast back to `json`: a body's own strings are then never decoded
   * by PostgreSQL's JSON parser, which refuses `\u0000` and a lone surrogate that `json` stores.
   */
  private async completeAll(items: Outcome[]): Promise<boolean[]> {
    const outcomes = items.map((o) => ({ m: o.claim.merchantId, k: o.claim.key, t: o.claim.token, s: o.status, b: JSON.stringify(o.body) }));
    const r = await this.knex.raw<{ rows: Array<{ claim_token: string }> }>(
      `UPDATE idempotency_keys k SET state = 'completed', response_status = x.s, response_body = x.b::json, claim_token = NULL
       FROM json_to_recordset(?::json) AS x(m uuid, k text, t uuid, s int, b text)
       WHERE k.merchant_id = x.m AND k.key = x.k AND k.claim_token = x.t AND k.state = 'in_progress'
       RETURNING x.t AS claim_token`,
      [JSON.stringify(outcomes)],
    );
    const stored = new Set(r.rows.map((row) => row.claim_token));
    return items.map((o) => stored.has(o.claim.token));
  }

  /**
   * Frees the key for any request (another body included): only for a request refused before it
   * could write anything under a resource id drawn for it alone (a fresh claim).
   */
  async release(claim: HeldClaim): Promise<void> {
    await this.knex.raw(
      `DELETE FROM idempotency_keys WHERE merchant_id = ? AND key = ? AND claim_token = ? AND state = 'in_progress'`,
      [claim.merchantId, claim.key, claim.token],
    );
  }

  /**
   * Gives the claim up without an outcome (a 5xx, an append whose commit is in doubt): the key keeps
   * its request and its resource id, and the next retry takes it over at once and finds whatever
   * committed. Nothing is stored, so that retry can still succeed (CONTRACT.md §6).
   */
  async relinquish(claim: HeldClaim): Promise<void> {
    await this.knex.raw(
      `UPDATE idempotency_keys SET locked_until = ?, claim_token = NULL
       WHERE merchant_id = ? AND key = ? AND claim_token = ? AND state = 'in_progress'`,
      [new Date(0), claim.merchantId, claim.key, claim.token],
    );
  }

  /**
   * After the work under `claim` failed: a fresh claim refused with bad_request (nothing written, the
   * body was wrong) frees the key for the corrected body; anything else keeps the resource id.
   */
  async abandon(claim: HeldClaim, refusedBody: boolean): Promise<void> {
    if (refusedBody && claim.fresh) await this.release(claim);
    else await this.relinquish(claim);
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
