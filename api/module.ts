// An API feature: its part of the OpenAPI document and the handlers for its operationIds, together.
import type { MerchantCredential } from './auth.ts';
import type { Response } from 'express';
import type { Logger } from 'pino';
import type { ApiServices } from './services.ts';
import type { ErrorDetail } from '../domain/errors.ts';
import type { Scope } from '../domain/api-key-scopes.ts';
import type { AuditAction } from '../domain/audit-log.ts';

export type AuthKind = 'merchant' | 'admin' | 'public';

export interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
  /** Who may call it. */
  'x-auth': AuthKind;
  /**
   * Merchant operations: the API key scope it needs (CONTRACT §18; GET `<resource>:read`, writes
   * `<resource>:write`), or `any` for the catalogue every key reads. Required: the server refuses
   * to start on a merchant operation without one (middleware/scope.ts).
   */
  'x-scope'?: Scope | 'any';
  /** Requires an Idempotency-Key and replays its stored outcome. */
  'x-idempotent'?: boolean;
  /**
   * Operator operations that may change something (POST, PUT, PATCH, DELETE): the audit log entry a
   * success records (CONTRACT §18), or `not-a-change` for one that only reads. Required: the server
   * refuses to start without it (middleware/audit.ts).
   */
  'x-audit'?: AuditDeclaration | 'not-a-change';
  security?: unknown[];
}

/**
 * Where an audited value comes from (middleware/audit.ts): `path:<name>` (a path parameter) or
 * `answer:<field>` (a field of the success answer's body, for what the call created).
 */
export type AuditSource = `path:${string}` | `answer:${string}`;

/** An operator change's audit log entry (CONTRACT §18): its action, its target, and the merchant it concerns (null: operator-wide). */
export interface AuditDeclaration {
  action: AuditAction;
  target: { type: string; id: AuditSource };
  merchant: AuditSource | null;
}

export interface Ctx {
  services: ApiServices;
  log: Logger;
  requestId: string;
  /** Set on merchant-authenticated operations. */
  merchantId: string;
  /** Set on merchant-authenticated operations: the key and secret (its stored hash) the request presented. */
  credential?: MerchantCredential;
  body: any;
  params: Record<string, string>;
  query: Record<string, any>;
  headers: Record<string, string | string[] | undefined>;
  /** The request as received, for a provider callback's signature: method, path and query, Host, body bytes. */
  raw?: { method: string; path: string; authority: string; body: Buffer };
  /**
   * Set on idempotent operations: the id the created resource must take (stable across a retry);
   * `fresh`: the resource id was drawn by this claim, so no stream has it yet (not a take-over).
   */
  idempotency?: { key: string; resourceId: string; fresh: boolean };
  clientIp: string;
}

export type Reply =
  /** `replayed`: what an earlier attempt under the same Idempotency-Key created, answered as a replay. */
  | {
    status: number; body: unknown; headers?: Record<string, string>; replayed?: boolean;
    /**
     * What the Idempotency-Key stores when it must differ from `body`: a secret in the answer is
     * stored sealed under `_sealed` ({field: sealed value}, infra/secrets.ts), never in clear, and
     * a replay answers it unsealed (the same body, CONTRACT §6).
     */
    stored?: unknown;
  }
  | { status: number; text: string; contentType: string; headers?: Record<string, string> }
  /** A response written over time (Server-Sent Events: GET /events/stream); `stream` takes it over. */
  | { status: number; stream: (res: Response) => void };

export type Handler = (ctx: Ctx) => Promise<Reply>;

/**
 * The domain's checks of a body that the schema cannot express (a phone for its country, a date
 * against the clock), by operationId: run beside the schema when it refuses the body, so one 400
 * lists every problem (issue 31). The deciders make the same checks again on a valid body.
 */
export type BodyCheck = (body: any, at: string) => ErrorDetail[];

export interface ApiModule {
  paths: Record<string, Record<string, Operation>>;
  schemas?: Record<string, unknown>;
  handlers: Record<string, Handler>;
  bodyChecks?: Record<string, BodyCheck>;
}
