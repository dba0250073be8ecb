// A stand-in for MTN's MoMo Open API, written from MTN's documentation (the Collection and
// Disbursement API pages, MTN's common-errors page, the sandbox test-number matrix and MTN's own
// SDK docs; see ../shared/PROVIDERS.md §1), not from our adapter, so a test of the adapter against
// it checks the adapter against MTN's contract as documented.
//
// What it plays:
//   POST /{collection|disbursement}/token/   Basic apiUser:apiKey + the product's subscription key;
//                                            200 {access_token, token_type, expires_in}; 411 without
//                                            Content-Length (an observed gateway quirk)
//   POST /collection/v1_0/requesttopay       202, empty body
//   GET  /collection/v1_0/requesttopay/{id}  200 {amount, currency, financialTransactionId, externalId,
//                                            payer, payerMessage, payeeNote, status, reason?}
//   POST /disbursement/v1_0/transfer         (and GET …/{id}, with `payee`)
//   POST /disbursement/v1_0/refund           (and /v2_0/refund; GET /v1_0/refund/{id})
//   GET  /{product}/v1_0/accountholder/{msisdn|email|party_code}/{id}/active   200 {result}
// Every product call checks the subscription key, the bearer token (of that product, not expired)
// and X-Target-Environment. X-Reference-Id must be a UUID v4 (400), a reused one answers 409
// RESOURCE_ALREADY_EXIST, an unknown one on a status query 404 RESOURCE_NOT_FOUND. A currency
// other than the environment's is refused 400 (MTN's common errors: "needs to match the target
// environment currency"; the sandbox's is EUR).
//
// Outcomes follow MTN's sandbox matrix (SANDBOX_* below), unless a test plans another with
// `plan()`. A leg is PENDING until it is settled: when its status is asked (unless `autoSettle`
// is off) or by `settle()`, so tests need no sleeps. Faults (`fault()`): an answer instead of the
// real one (500 by default), before or after the leg is recorded, or no answer at all (the client
// times out); `down()`/`up()` close and reopen the port. Every request is kept (`requests`,
// `count()`) for tests to assert on, and a settled leg's callback can be sent to its X-Callback-Url.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomInt } from 'node:crypto';

type Product = 'collection' | 'disbursement';
type Kind = 'requesttopay' | 'transfer' | 'refund';

/** How a leg ends. The non-final statuses stay as they are once settled. */
export type MtnOutcome =
  | { status: 'SUCCESSFUL' }
  | { status: 'FAILED'; reason: string; message?: string; reasonShape?: 'string' | 'object' }
  | { status: 'PENDING' | 'CREATED' | 'ONGOING' };

const failed = (reason: string): MtnOutcome => ({ status: 'FAILED', reason });

// MTN's sandbox matrix ("Sandbox Use Cases" of momodeveloper's testing page, as quoted in
// api-evangelist/mtn-group; the request-to-pay rows agree with nkap's observations of the live
// sandbox for 450-452 and 454). "Failed" is observed as INTERNAL_PROCESSING_ERROR, "Delayed" as a
// leg that stays CREATED, "Ongoing" as ONGOING. Any other number succeeds.
const SANDBOX_REQUEST_TO_PAY: Record<string, MtnOutcome> = {
  '46733123450': failed('INTERNAL_PROCESSING_ERROR'), '46733123451': failed('APPROVAL_REJECTED'),
  '46733123452': failed('EXPIRED'), '46733123453': { status: 'ONGOING' }, '46733123454': { status: 'CREATED' },
  '46733123455': failed('PAYER_NOT_FOUND'), '46733123456': failed('PAYEE_NOT_ALLOWED_TO_RECEIVE'),
  '46733123457': failed('NOT_ALLOWED'), '46733123458': failed('NOT_ALLOWED_TARGET_ENVIRONMENT'),
  '46733123459': failed('INVALID_CALLBACK_URL_HOST'), '46733123460': failed('INVALID_CURRENCY'),
  '46733123461': failed('INTERNAL_PROCESSING_ERROR'), '46733123462': failed('SERVICE_UNAVAILABLE'),
  '46733123463': failed('COULD_NOT_PERFORM_TRANSACTION'),
};
const SANDBOX_TRANSFER: Record<string, MtnOutcome> = {
  '46733123450': failed('INTERNAL_PROCESSING_ERROR'), '46733123451': failed('APPROVAL_REJECTED'),
  '46733123452': failed('EXPIRED'), '46733123453': { status: 'ONGOING' }, '46733123454': { status: 'CREATED' },
  '46733123455': failed('NOT_ENOUGH_FUNDS'), '46733123456': failed('PAYER_LIMIT_REACHED'),
  '46733123457': failed('PAYEE_NOT_FOUND'), '46733123458': failed('NOT_ALLOWED'),
  '46733123459': failed('NOT_ALLOWED_TARGET_ENVIRONMENT'), '46733123460': failed('INVALID_CALLBACK_URL_HOST'),
  '46733123461': failed('INVALID_CURRENCY'), '46733123462': failed('INTERNAL_PROCESSING_ERROR'),
  '46733123463': failed('SERVICE_UNAVAILABLE'),
};
// Refund scenarios go by `referenceIdToRefund`. The sandbox succeeds any other refund; this one
// succeeds a refund of a request-to-pay it has and fails any other TRANSACTION_NOT_FOUND (one of
// MTN's documented failure reasons), so that a wrong referenceIdToRefund shows in a test.
const SANDBOX_REFUND: Record<string, MtnOutcome> = {
  1: failed('TRANSACTION_NOT_FOUND'), 2: failed('INTERNAL_PROCESSING_ERROR'), 3: failed('APPROVAL_REJECTED'),
  4: failed('EXPIRED'), 5: { status: 'ONGOING' }, 6: { status: 'CREATED' }, 7: failed('NOT_ALLOWED'),
  8: failed('NOT_ALLOWED_TARGET_ENVIRONMENT'), 9: failed('INVALID_CALLBACK_URL_HOST'), 10: failed('INVALID_CURRENCY'),
  11: failed('INTERNAL_PROCESSING_ERROR'), 12: failed('SERVICE_UNAVAILABLE'), 13: failed('COULD_NOT_PERFORM_TRANSACTION'),
};
// Account-holder checks: 450 NotFound, 451 NotActive, 452 NotAllowed, 453 NotAllowedTargetEnvironment,
// 454 InternalProcessingError, 455 ServiceUnavailable. The HTTP status of each is not documented;
// these are our reading. The numbers collide with the transfer matrix, as in MTN's sandbox.
const SANDBOX_ACCOUNT_HOLDER: Record<string, { status: number; body: unknown }> = {
  '46733123450': { status: 404, body: { code: 'RESOURCE_NOT_FOUND', message: 'Account holder not found.' } },
  '46733123451': { status: 200, body: { result: false } },
  '46733123452': { status: 403, body: { code: 'NOT_ALLOWED', message: 'Authorization failed.' } },
  '46733123453': { status: 403, body: { code: 'NOT_ALLOWED_TARGET_ENVIRONMENT', message: 'Access to target environment is forbidden.' } },
  '46733123454': { status: 500, body: { code: 'INTERNAL_PROCESSING_ERROR', message: 'An internal error occurred while processing.' } },
  '46733123455': { status: 503, body: { code: 'SERVICE_UNAVAILABLE', message: 'Service unavailable.' } },
};

/** MTN sandbox test MSISDNs by what they do to a request-to-pay (transfers: see SANDBOX_TRANSFER). */
export const MTN_TEST_NUMBERS = {
  failed: '46733123450', rejected: '46733123451', expired: '46733123452', ongoing: '46733123453', delayed: '46733123454',
  payerNotFound: '46733123455', notEnoughFundsOnTransfer: '46733123455', payeeNotFoundOnTransfer: '46733123457',
} as const;

export interface MtnCredentials { subscriptionKey: string; apiUser: string; apiKey: string }

export interface MtnSimulatorOptions {
  collection: MtnCredentials;
  disbursement: MtnCredentials;
  targetEnvironment?: string;
  /** The environment's currency (the sandbox's is EUR). */
  currency?: string;
  tokenTtlSeconds?: number;
  /** How FAILED legs carry `reason`: a bare code (what the sandbox answers) or MTN's schema's `{code, message}`. */
  reasonShape?: 'string' | 'object';
  /** Settle a leg when its status is asked (default true); off, legs stay PENDING until `settle()`. */
  autoSettle?: boolean;
  /** Send each settled leg's callback to its X-Callback-Url with this method. */
  callbacks?: 'PUT' | 'POST';
  /**
   * Keep connections open between requests, as MTN's gateway does (the bench: a new connection per
   * call is a cost MTN does not impose). Off by default: see `send`.
   */
  keepAlive?: boolean;
  now?: () => number;
}

export interface RecordedRequest { method: string; path: string; headers: IncomingHttpHeaders; raw: string; body: unknown }

export interface MtnFault {
  method?: 'GET' | 'POST';
  /** The path, or its start. */
  path: string;
  /** The answer's status (500 unless `hang`) and body. */
  status?: number;
  body?: unknown;
  /** Keep the request open without answering: the client times out. */
  hang?: boolean;
  /** Process the request (record the leg) before answering with the fault (default true). */
  record?: boolean;
  /** How many requests it applies to (default 1). */
  times?: number;
}

export interface MtnLeg {
  kind: Kind;
  referenceId: string;
  body: Record<string, unknown>;
  status: 'PENDING' | 'SUCCESSFUL' | 'FAILED' | 'CREATED' | 'ONGOING';
  planned: MtnOutcome;
  callbackUrl?: string | undefined;
  financialTransactionId?: string;
}

export interface SentCallback { url: string; method: string; body: unknown; status?: number; error?: string }

interface Answer { status: number; body?: unknown; headers?: Record<string, string> }

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const INTERNAL_ERROR = { code: 'INTERNAL_PROCESSING_ERROR', message: 'An internal error occurred while processing.' };

const badRequest = (message: string, code = 'BAD_REQUEST'): Answer => ({ status: 400, body: { code, message } });
// Azure API Management's answers, which sit in front of MTN's API.
const apimDenied = (message: string): Answer => ({ status: 401, body: { statusCode: 401, message } });

export class MtnMomoSimulator {
  readonly requests: RecordedRequest[] = [];
  readonly callbacks: SentCallback[] = [];
  readonly legs = new Map<string, MtnLeg>();
  autoSettle: boolean;
  reasonShape: 'string' | 'object';
  private readonly tokens = new Map<string, { product: Product; expiresAt: number }>();
  private readonly plans = new Map<string, MtnOutcome>();
  private readonly accountHolders = new Map<string, boolean>();
  private readonly faults: Array<MtnFault & { left: number }> = [];
  private readonly hanging = new Set<ServerResponse>();
  /** The most requests held without an answer at once so far (`hang` faults). */
  peakHanging = 0;
  private readonly sending = new Set<Promise<void>>();
  private readonly server: Server;
  private port = 0;

  constructor(private readonly o: MtnSimulatorOptions) {
    this.autoSettle = o.autoSettle ?? true;
    this.reasonShape = o.reasonShape ?? 'string';
    this.server = createServer((req, res) => { void this.handle(req, res); });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private get currency(): string { return this.o.currency ?? 'EUR'; }
  private get targetEnvironment(): string { return this.o.targetEnvironment ?? 'sandbox'; }
  private now(): number { return (this.o.now ?? Date.now)(); }

  async up(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => { this.server.off('error', reject); resolve(); });
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Closes the port (connections refused) and drops every open connection, hung ones too. */
  async down(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  /** Requests held without an answer right now (`hang` faults). */
  get hangingNow(): number {
    return this.hanging.size;
  }

  /** Requests whose `METHOD /path` starts with `prefix`, e.g. `POST /collection/token/`. */
  count(prefix: string): number {
    return this.requests.filter((r) => `${r.method} ${r.path}`.startsWith(prefix)).length;
  }

  /** Every token issued so far is expired: the next call with one is answered 401. */
  expireTokens(): void {
    for (const t of this.tokens.values()) t.expiresAt = 0;
  }

  /** The outcome of the legs of this MSISDN (request-to-pay, transfer) or referenceIdToRefund (refund). */
  plan(party: string, outcome: MtnOutcome): void {
    this.plans.set(party, outcome);
  }

  /** What the account-holder check answers for this MSISDN: {result: active}. */
  accountHolder(msisdn: string, active: boolean): void {
    this.accountHolders.set(msisdn, active);
  }

  fault(f: MtnFault): void {
    this.faults.push({ ...f, left: f.times ?? 1 });
  }
  /** Drops the faults not yet used up. */
  clearFaults(): void {
    this.faults.length = 0;
  }


  /** Settles one leg (by X-Reference-Id) or every leg still PENDING to its planned outcome. */
  settle(referenceId?: string): void {
    const legs = referenceId ? [this.legs.get(referenceId)].filter((l): l is MtnLeg => l !== undefined) : [...this.legs.values()];
    for (const leg of legs) this.settleLeg(leg);
  }

  /** Waits for every callback sent so far to be answered (or to fail). */
  async flushCallbacks(): Promise<void> {
    await Promise.all([...this.sending]);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? '/').split('?')[0]!;
    const method = req.method ?? 'GET';
    let body: unknown;
    try { body = raw.length > 0 ? JSON.parse(raw) : undefined; } catch { body = undefined; }
    this.requests.push({ method, path, headers: req.headers, raw, body });
    const fault = this.takeFault(method, path);
    if (fault && fault.record === false) return this.answerFault(res, fault);
    let answer: Answer;
    try {
      answer = this.route(method, path, req.headers, body, raw);
    } catch (err) {
      answer = { status: 500, body: { ...INTERNAL_ERROR, message: (err as Error).message } };
    }
    if (fault) return this.answerFault(res, fault);
    send(res, answer, this.o.keepAlive);
  }

  private takeFault(method: string, path: string): MtnFault | undefined {
    const i = this.faults.findIndex((f) => path.startsWith(f.path) && (!f.method || f.method === method));
    if (i < 0) return undefined;
    const f = this.faults[i]!;
    if (--f.left <= 0) this.faults.splice(i, 1);
    return f;
  }

  private answerFault(res: ServerResponse, f: MtnFault): void {
    if (f.hang) {
      this.hanging.add(res);
      this.peakHanging = Math.max(this.peakHanging, this.hanging.size);
      res.on('close', () => this.hanging.delete(res));
      return;
    }
    send(res, { status: f.status ?? 500, body: f.body ?? INTERNAL_ERROR }, this.o.keepAlive);
  }

  private route(method: string, path: string, headers: IncomingHttpHeaders, body: unknown, raw: string): Answer {
    const token = /^\/(collection|disbursement)\/token\/?$/.exec(path);
    if (token && method === 'POST') return this.issueToken(token[1] as Product, headers, raw);
    const create = /^\/(collection\/v1_0\/requesttopay|disbursement\/v1_0\/transfer|disbursement\/v[12]_0\/refund)$/.exec(path);
    const read = /^\/(?:collection\/v1_0\/(requesttopay)|disbursement\/v1_0\/(transfer|refund))\/([^/]+)$/.exec(path);
    const holder = /^\/(collection|disbursement)\/v1_0\/accountholder\/([^/]+)\/([^/]+)\/active$/.exec(path);
    const product: Product | undefined = create ? (create[1]!.startsWith('collection') ? 'collection' : 'disbursement')
      : read ? (read[1] ? 'collection' : 'disbursement') : (holder?.[1] as Product | undefined);
    if (!product) return { status: 404, body: { statusCode: 404, message: 'Resource not found' } };
    const denied = this.authorize(product, headers);
    if (denied) return denied;
    if (create && method === 'POST') return this.create(kindOfPath(create[1]!), headers, body);
    if (read && method === 'GET') return this.read((read[1] ?? read[2]) as Kind, decodeURIComponent(read[3]!));
    if (holder && method === 'GET') return this.accountHolderAnswer(holder[2]!, decodeURIComponent(holder[3]!));
    return { status: 405, body: { statusCode: 405, message: 'Method not allowed' } };
  }

  private issueToken(product: Product, headers: IncomingHttpHeaders, raw: string): Answer {
    if (headers['content-length'] === undefined) return { status: 411, body: '<h2>Length Required</h2>', headers: { 'content-type': 'text/html' } };
    if (headers['ocp-apim-subscription-key'] !== this.o[product].subscriptionKey) {
      return apimDenied('Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription.');
    }
    const c = this.o[product];
    const expected = `Basic ${Buffer.from(`${c.apiUser}:${c.apiKey}`).toString('base64')}`;
    if (headers.authorization !== expected) return { status: 401, body: { error: 'login_failed' } };
    if (raw.length > 0) return badRequest('The token call takes no body.');
    const ttl = this.o.tokenTtlSeconds ?? 3600;
    const accessToken = `tok-${product}-${randomBytes(12).toString('hex')}`;
    this.tokens.set(accessToken, { product, expiresAt: this.now() + ttl * 1000 });
    return { status: 200, body: { access_token: accessToken, token_type: 'access_token', expires_in: ttl } };
  }

  private authorize(product: Product, headers: IncomingHttpHeaders): Answer | undefined {
    if (headers['ocp-apim-subscription-key'] !== this.o[product].subscriptionKey) {
      return apimDenied('Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription.');
    }
    const bearer = /^Bearer (.+)$/.exec(String(headers.authorization ?? ''))?.[1];
    const t = bearer ? this.tokens.get(bearer) : undefined;
    if (!t || t.product !== product || t.expiresAt <= this.now()) return apimDenied('Access denied due to invalid or expired access token.');
    if (headers['x-target-environment'] !== this.targetEnvironment) {
      return badRequest('X-Target-Environment is not allowed for this subscription.', 'NOT_ALLOWED_TARGET_ENVIRONMENT');
    }
    return undefined;
  }

  private create(kind: Kind, headers: IncomingHttpHeaders, body: unknown): Answer {
    const referenceId = String(headers['x-reference-id'] ?? '');
    if (!UUID_V4.test(referenceId)) return badRequest('X-Reference-Id must be a UUID version 4.');
    if (this.legs.has(referenceId)) {
      return { status: 409, body: { code: 'RESOURCE_ALREADY_EXIST', message: 'Duplicated reference id. Creation of resource failed.' } };
    }
    const invalid = this.invalidBody(kind, body, headers['x-callback-url']);
    if (invalid) return invalid;
    const b = body as Record<string, unknown>;
    const callbackUrl = typeof headers['x-callback-url'] === 'string' ? headers['x-callback-url'] : undefined;
    this.legs.set(referenceId, { kind, referenceId, body: b, status: 'PENDING', planned: this.planFor(kind, b), callbackUrl });
    return { status: 202 };
  }

  private invalidBody(kind: Kind, body: unknown, callbackUrl: unknown): Answer | undefined {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return badRequest('The body must be a JSON object.');
    const b = body as Record<string, unknown>;
    if (typeof b.amount !== 'string' || !/^\d+(\.\d+)?$/.test(b.amount)) return badRequest('amount must be a number in a string.');
    if (b.currency !== this.currency) return badRequest(`Currency not supported: ${String(b.currency)}.`, 'INVALID_CURRENCY');
    for (const note of [b.payerMessage, b.payeeNote, b.externalId]) {
      if (note !== undefined && (typeof note !== 'string' || note.length > 160 || note.includes("'"))) return badRequest('A note is too long or has special characters.');
    }
    if (kind === 'refund') {
      if (typeof b.referenceIdToRefund !== 'string' || b.referenceIdToRefund.length === 0) return badRequest('referenceIdToRefund is required.');
    } else {
      const party = (kind === 'requesttopay' ? b.payer : b.payee) as { partyIdType?: unknown; partyId?: unknown } | undefined;
      if (party?.partyIdType !== 'MSISDN' || typeof party.partyId !== 'string' || !/^\d{6,15}$/.test(party.partyId)) {
        return badRequest('The party must be an MSISDN of digits, country code included.');
      }
    }
    if (callbackUrl !== undefined && (typeof callbackUrl !== 'string' || !URL.canParse(callbackUrl))) return badRequest('X-Callback-Url is not a URL.');
    return undefined;
  }

  private planFor(kind: Kind, b: Record<string, unknown>): MtnOutcome {
    if (kind === 'refund') {
      const target = String(b.referenceIdToRefund);
      const refunded = this.legs.get(target);
      return this.plans.get(target) ?? SANDBOX_REFUND[target]
        ?? (refunded?.kind === 'requesttopay' ? { status: 'SUCCESSFUL' } : failed('TRANSACTION_NOT_FOUND'));
    }
    const party = String(((kind === 'requesttopay' ? b.payer : b.payee) as { partyId: string }).partyId);
    const table = kind === 'requesttopay' ? SANDBOX_REQUEST_TO_PAY : SANDBOX_TRANSFER;
    return this.plans.get(party) ?? table[party] ?? { status: 'SUCCESSFUL' };
  }

  private read(kind: Kind, referenceId: string): Answer {
    const leg = this.legs.get(referenceId);
    if (!leg || leg.kind !== kind) return { status: 404, body: { code: 'RESOURCE_NOT_FOUND', message: 'Requested resource was not found.' } };
    if (this.autoSettle) this.settleLeg(leg);
    return { status: 200, body: this.statusBody(leg) };
  }

  private statusBody(leg: MtnLeg): Record<string, unknown> {
    const b = leg.body;
    const refunded = leg.kind === 'refund' ? this.legs.get(String(b.referenceIdToRefund)) : undefined;
    const party = leg.kind === 'requesttopay' ? { payer: b.payer } : { payee: leg.kind === 'transfer' ? b.payee : refunded?.body.payer };
    const out: Record<string, unknown> = {
      amount: b.amount, currency: b.currency, externalId: b.externalId, ...party,
      payerMessage: b.payerMessage, payeeNote: b.payeeNote, status: leg.status,
    };
    if (leg.financialTransactionId) out.financialTransactionId = leg.financialTransactionId;
    if (leg.status === 'FAILED' && leg.planned.status === 'FAILED') {
      const p = leg.planned;
      out.reason = (p.reasonShape ?? this.reasonShape) === 'object' ? { code: p.reason, message: p.message ?? p.reason } : p.reason;
    }
    return out;
  }

  private accountHolderAnswer(idType: string, id: string): Answer {
    if (!['msisdn', 'email', 'party_code'].includes(idType)) return badRequest('accountHolderIdType must be msisdn, email or party_code, in lower case.');
    const planned = this.accountHolders.get(id);
    if (planned !== undefined) return { status: 200, body: { result: planned } };
    return SANDBOX_ACCOUNT_HOLDER[id] ?? { status: 200, body: { result: true } };
  }

  private settleLeg(leg: MtnLeg): void {
    if (leg.status !== 'PENDING') return;
    leg.status = leg.planned.status;
    if (leg.status === 'SUCCESSFUL' || leg.status === 'FAILED') {
      if (leg.status === 'SUCCESSFUL') leg.financialTransactionId = String(randomInt(100_000_000, 999_999_999));
      this.sendCallback(leg);
    }
  }

  /** MTN's callback "is similar to the status answer" and carries externalId, not X-Reference-Id. */
  private sendCallback(leg: MtnLeg): void {
    const method = this.o.callbacks;
    if (!method || !leg.callbackUrl) return;
    const body = this.statusBody(leg);
    const sent: SentCallback = { url: leg.callbackUrl, method, body };
    this.callbacks.push(sent);
    const p = fetch(leg.callbackUrl, { method, headers: { 'content-type': 'application/json', 'user-agent': 'LWAC Http Client 1.0' }, body: JSON.stringify(body) })
      .then(async (r) => { sent.status = r.status; await r.text(); })
      .catch((err: Error) => { sent.error = err.message; })
      .finally(() => { this.sending.delete(p); });
    this.sending.add(p);
  }
}

function kindOfPath(p: string): Kind {
  if (p.endsWith('requesttopay')) return 'requesttopay';
  return p.endsWith('transfer') ? 'transfer' : 'refund';
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

// Unless kept alive, every answer closes its connection: a client's next request opens a new one,
// so after `down()` it is refused before anything is sent, instead of racing a pooled socket the
// server just closed (which a client must read as in doubt: the request may have left).
function send(res: ServerResponse, a: Answer, keepAlive = false): void {
  const connection = keepAlive ? {} : { connection: 'close' };
  if (a.body === undefined) {
    res.writeHead(a.status, { 'content-length': '0', ...connection, ...a.headers }).end();
    return;
  }
  const text = typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
  res.writeHead(a.status, { 'content-type': 'application/json;charset=utf-8', ...connection, ...a.headers }).end(text);
}

/** Starts a simulator on 127.0.0.1, on a port of the system's choosing. */
export async function startMtnMomoSimulator(o: MtnSimulatorOptions): Promise<MtnMomoSimulator> {
  const sim = new MtnMomoSimulator(o);
  await sim.up();
  return sim;
}
