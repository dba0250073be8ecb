// A simulator of pawaPay's Merchant API v2, written from pawaPay's documentation (docs.pawapay.io),
// not from our adapter: an HTTP server on 127.0.0.1 that a test points PAWAPAY_BASE_URL at.
//
// What it plays:
//   POST /v2/deposits | /v2/payouts | /v2/refunds   initiation: `{<id>, status: ACCEPTED|REJECTED|
//        DUPLICATE_IGNORED, created, failureReason?}`; REJECTED with HTTP 200 for INVALID_PROVIDER,
//        INVALID_CURRENCY, INVALID_PHONE_NUMBER, INVALID_AMOUNT, AMOUNT_OUT_OF_BOUNDS, with HTTP 400 for
//        INVALID_INPUT, MISSING_PARAMETER, UNSUPPORTED_PARAMETER, INVALID_PARAMETER (docs: failure codes)
//   GET  /v2/<resource>/<id>    `{status: FOUND, data: {…, status, failureReason?}}` or `{status: NOT_FOUND}`
//   GET  /v2/public-key/http    `[{id, key}]` (PEM), the keys its callbacks are signed with
//   every call: `Authorization: Bearer <token>` (missing: 401 NO_AUTHENTICATION; wrong: 403
//   AUTHENTICATION_ERROR, the HTTP statuses the failure-codes page gives)
//
// Outcomes, by the sandbox test numbers (docs.pawapay.io/v2/docs/test_numbers and
// docs.pawapay.io/testing_the_api; see TEST_NUMBERS): a payment is ACCEPTED, then settles to its
// number's outcome when its status is asked (or `settle()` is called), so a test needs no sleep. Any
// other valid number completes (assumed: the docs list only the numbers that do something else).
// `force()` sets any documented status and failure code. Refunds complete unless forced.
//
// Faults a test switches on: `failNextInitiation('error')` answers the next initiation 500 after
// recording it, `'hang'` never answers it (after recording it); `down()` stops listening (connections
// are refused) until `up()`, and `downAfterNextAnswer()` does so once the next answer is sent. Every
// request is kept in `requests`.
//
// Callbacks: `sendCallback()` POSTs a payment's data to a URL, signed as pawaPay signs (RFC 9421:
// Content-Digest sha-512, Signature-Date, `sig-pp` over @method @authority @path signature-date
// content-digest content-type, ecdsa-p256-sha256 in DER), unsigned, signed with another key under
// the same key id (a forgery), or with the body changed after signing.
//
// Assumed where the docs are silent: a REJECTED initiation is not kept (its status stays NOT_FOUND);
// a refund of a deposit that is unknown or not COMPLETED is REJECTED 400 INVALID_PARAMETER; a refund
// over what is left of the deposit is REJECTED AMOUNT_TOO_LARGE (DEPOSIT_ALREADY_REFUNDED when
// nothing is left); a deposit stuck in the sandbox reads PROCESSING.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

export type Resource = 'deposits' | 'payouts' | 'refunds';
const ID_FIELD = { deposits: 'depositId', payouts: 'payoutId', refunds: 'refundId' } as const;

/** Providers of our countries (docs: providers), with their MSISDN shape and currency. */
const PROVIDERS: Record<string, { country: string; dial: string; nationalDigits: number[]; currency: string }> = {
  MTN_MOMO_CMR: { country: 'CMR', dial: '237', nationalDigits: [9], currency: 'XAF' },
  ORANGE_CMR: { country: 'CMR', dial: '237', nationalDigits: [9], currency: 'XAF' },
  ORANGE_SEN: { country: 'SEN', dial: '221', nationalDigits: [9], currency: 'XOF' },
  FREE_SEN: { country: 'SEN', dial: '221', nationalDigits: [9], currency: 'XOF' },
  WAVE_SEN: { country: 'SEN', dial: '221', nationalDigits: [9], currency: 'XOF' },
  // Benin's numbers went from 8 to 10 digits in 2024; the sandbox's test numbers still have 8.
  MTN_MOMO_BEN: { country: 'BEN', dial: '229', nationalDigits: [8, 10], currency: 'XOF' },
  MOOV_BEN: { country: 'BEN', dial: '229', nationalDigits: [8, 10], currency: 'XOF' },
  MTN_MOMO_CIV: { country: 'CIV', dial: '225', nationalDigits: [10], currency: 'XOF' },
  ORANGE_CIV: { country: 'CIV', dial: '225', nationalDigits: [10], currency: 'XOF' },
  WAVE_CIV: { country: 'CIV', dial: '225', nationalDigits: [10], currency: 'XOF' },
};

const COMPLETED = 'COMPLETED';
/** The sandbox's "SUBMITTED, no callback": never settles. */
const STUCK = 'STUCK';

/**
 * Sandbox test numbers: a prefix, then the last three digits → outcome (COMPLETED, STUCK or a
 * failure code). Benin MTN, Cameroon MTN and Côte d'Ivoire as pawaPay's own pages list them (the
 * older page says OTHER_ERROR where v2 says UNSPECIFIED_FAILURE); Cameroon Orange and Senegal as
 * third-party copies of the v2 page list them (the copy of pawaPay's page read was cut off there).
 */
const TEST_NUMBERS: ReadonlyArray<{ prefix: string; deposits: Record<string, string>; payouts: Record<string, string> }> = [
  { prefix: '22951345',
    deposits: { '029': 'PAYER_NOT_FOUND', '039': 'PAYMENT_NOT_APPROVED', '069': 'UNSPECIFIED_FAILURE', '129': STUCK, '789': COMPLETED },
    payouts: { '089': 'RECIPIENT_NOT_FOUND', '119': 'UNSPECIFIED_FAILURE', '129': STUCK, '789': COMPLETED } },
  { prefix: '237653456',
    deposits: { '019': 'PAYER_LIMIT_REACHED', '029': 'PAYER_NOT_FOUND', '039': 'PAYMENT_NOT_APPROVED', '069': 'UNSPECIFIED_FAILURE', '129': STUCK, '789': COMPLETED },
    payouts: { '089': 'RECIPIENT_NOT_FOUND', '119': 'UNSPECIFIED_FAILURE', '129': STUCK, '789': COMPLETED } },
  { prefix: '237693456',
    deposits: { '019': 'PAYER_LIMIT_REACHED', '029': 'PAYER_NOT_FOUND', '039': 'PAYMENT_NOT_APPROVED', '049': 'INSUFFICIENT_BALANCE', '069': 'UNSPECIFIED_FAILURE', '129': STUCK, '789': COMPLETED },
    payouts: { '099': 'WALLET_LIMIT_REACHED', '119': 'UNSPECIFIED_FAILURE', '129': STUCK, '789': COMPLETED } },
  { prefix: '2250503456',
    deposits: { '029': 'PAYER_NOT_FOUND', '039': 'PAYMENT_NOT_APPROVED', '069': 'UNSPECIFIED_FAILURE', '129': STUCK, '789': COMPLETED },
    payouts: { '089': 'RECIPIENT_NOT_FOUND', '119': 'UNSPECIFIED_FAILURE', '129': STUCK, '789': COMPLETED } },
  { prefix: '221773456',
    deposits: { '029': 'PAYER_NOT_FOUND', '049': 'INSUFFICIENT_BALANCE', '069': 'UNSPECIFIED_FAILURE', '129': STUCK, '789': COMPLETED },
    payouts: {} },
  { prefix: '221763456',
    deposits: { '049': 'INSUFFICIENT_BALANCE', '069': 'UNSPECIFIED_FAILURE', '129': STUCK, '789': COMPLETED },
    payouts: {} },
];

const FIELDS: Record<Resource, string[]> = {
  deposits: ['depositId', 'amount', 'currency', 'payer', 'preAuthorisationCode', 'clientReferenceId', 'customerMessage', 'metadata'],
  payouts: ['payoutId', 'amount', 'currency', 'recipient', 'clientReferenceId', 'customerMessage', 'metadata'],
  refunds: ['refundId', 'depositId', 'amount', 'currency', 'clientReferenceId', 'metadata'],
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The body parsed as JSON (undefined when empty or not JSON). */
  body: unknown;
}

export interface Transaction {
  resource: Resource;
  id: string;
  status: string;
  failureReason?: { failureCode: string; failureMessage: string } | undefined;
  request: Record<string, unknown>;
  created: string;
  /** What the sandbox settles it to: COMPLETED, STUCK or a failure code. */
  planned: string;
  amount: bigint;
  /** Deposits: what is left to refund. */
  refundable: bigint;
  /** Put in a status by `force()`: the sandbox no longer settles it. */
  forced: boolean;
}

export interface SimulatorOptions {
  token: string;
  /** The key callbacks are signed with, served at /v2/public-key/http (a test generates it). */
  signing?: { keyId: string; privateKey: KeyObject; publicKey: KeyObject } | undefined;
  /** Transaction limits (the active configuration's min and max), whole units. */
  amountBounds?: { min: bigint; max: bigint } | undefined;
  /** Providers not active on this account: initiations naming them are REJECTED INVALID_PROVIDER. */
  inactiveProviders?: string[] | undefined;
  /** Settle a payment when its status is asked (default); false: only `settle()` or `force()` move it. */
  autoSettle?: boolean | undefined;
  now?: (() => number) | undefined;
}

export type CallbackMode = 'signed' | 'unsigned' | 'wrong-key' | 'tampered';

interface Answer {
  http: number;
  body: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const rejected = (http: number, idField: string, id: unknown, failureCode: string, failureMessage: string): Answer => ({
  http, body: { ...(typeof id === 'string' ? { [idField]: id } : {}), status: 'REJECTED', failureReason: { failureCode, failureMessage } },
});

export class PawapaySimulator {
  readonly requests: RecordedRequest[] = [];
  private readonly transactions = new Map<string, Transaction>();
  private readonly server: http.Server;
  private port = 0;
  private nextFault: 'error' | 'hang' | undefined;
  private downAfterAnswer = false;
  private readonly now: () => number;

  private constructor(private readonly options: SimulatorOptions) {
    this.now = options.now ?? Date.now;
    this.server = http.createServer((req, res) => { void this.handle(req, res); });
  }

  static async start(options: SimulatorOptions): Promise<PawapaySimulator> {
    const sim = new PawapaySimulator(options);
    await sim.up();
    return sim;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens again (on the same port once it had one). */
  up(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.port = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  /** Stops listening and drops every connection (a hanging answer too): calls are refused until `up()`. */
  down(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  close(): Promise<void> {
    return this.server.listening ? this.down() : Promise.resolve();
  }

  /** Goes down (as `down()`) once the next answer has been sent: pawaPay unreachable right after answering. */
  downAfterNextAnswer(): void {
    this.downAfterAnswer = true;
  }

  /** The next initiation is recorded, then answered 500 (`error`) or never answered (`hang`). */
  failNextInitiation(fault: 'error' | 'hang'): void {
    this.nextFault = fault;
  }

  /** The bodies of the initiations received for a resource, in order. */
  initiations(resource: Resource): Array<Record<string, unknown>> {
    return this.requests.filter((r) => r.method === 'POST' && r.path === `/v2/${resource}`).map((r) => r.body as Record<string, unknown>);
  }

  transaction(resource: Resource, id: string): Transaction | undefined {
    return this.transactions.get(`${resource}:${id}`);
  }

  /** Settles a payment still in progress to its test number's outcome, as the sandbox would. */
  settle(resource: Resource, id: string): Transaction {
    const t = this.must(resource, id);
    if (t.status !== 'ACCEPTED' || t.forced) return t;
    if (t.planned === STUCK) t.status = 'PROCESSING';
    else if (t.planned === COMPLETED) t.status = COMPLETED;
    else this.fail(t, t.planned);
    return t;
  }

  /** Puts a payment in any status (ACCEPTED, ENQUEUED, PROCESSING, IN_RECONCILIATION, COMPLETED, FAILED…), where it stays until forced again. */
  force(resource: Resource, id: string, status: string, failureCode?: string): Transaction {
    const t = this.must(resource, id);
    t.forced = true;
    if (status === 'FAILED') this.fail(t, failureCode ?? 'UNSPECIFIED_FAILURE');
    else {
      t.status = status;
      t.failureReason = undefined;
    }
    return t;
  }

  private must(resource: Resource, id: string): Transaction {
    const t = this.transaction(resource, id);
    if (!t) throw new Error(`the simulator has no ${resource} ${id}`);
    return t;
  }

  private fail(t: Transaction, failureCode: string): void {
    t.status = 'FAILED';
    t.failureReason = { failureCode, failureMessage: `Sandbox: ${failureCode}` };
    if (t.resource === 'refunds') {
      const deposit = this.transaction('deposits', t.request.depositId as string);
      if (deposit) deposit.refundable += t.amount; // a failed refund gives nothing back: the deposit can be refunded again
    }
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = raw.length > 0 ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
    }
    const path = (req.url ?? '/').split('?')[0]!;
    this.requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
    const answer = this.route(req, path, raw, body);
    if (answer === 'hang') return; // the connection stays open until down() or close()
    if (this.downAfterAnswer) {
      // This answer's connection closed with it, so the client's next call opens one and is refused.
      this.downAfterAnswer = false;
      res.setHeader('connection', 'close');
      res.on('finish', () => void this.down());
    }
    res.writeHead(answer.http, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  }

  private route(req: http.IncomingMessage, path: string, raw: string, body: unknown): Answer | 'hang' {
    const auth = req.headers.authorization;
    if (!auth) return { http: 401, body: { failureReason: { failureCode: 'NO_AUTHENTICATION', failureMessage: 'No API token in the request' } } };
    if (auth !== `Bearer ${this.options.token}`) {
      return { http: 403, body: { failureReason: { failureCode: 'AUTHENTICATION_ERROR', failureMessage: 'The API token is not valid' } } };
    }
    if (req.method === 'GET' && path === '/v2/public-key/http') return { http: 200, body: this.publicKeys() };
    const m = /^\/v2\/(deposits|payouts|refunds)(?:\/([^/]+))?$/.exec(path);
    if (!m) return { http: 404, body: { failureReason: { failureCode: 'NOT_FOUND', failureMessage: `No such endpoint ${path}` } } };
    const resource = m[1] as Resource;
    if (req.method === 'GET' && m[2]) return this.statusOf(resource, decodeURIComponent(m[2]));
    if (req.method === 'POST' && !m[2]) return this.initiate(resource, raw, body);
    return { http: 405, body: {} };
  }

  private publicKeys(): unknown {
    const s = this.options.signing;
    return s ? [{ id: s.keyId, key: s.publicKey.export({ type: 'spki', format: 'pem' }).toString() }] : [];
  }

  private statusOf(resource: Resource, id: string): Answer {
    const t = this.transaction(resource, id);
    if (!t) return { http: 200, body: { status: 'NOT_FOUND' } };
    if (this.options.autoSettle !== false) this.settle(resource, id);
    return { http: 200, body: { status: 'FOUND', data: this.dataOf(t) } };
  }

  /** A payment as pawaPay shows it: in the status answer's `data`, and as a callback's body. */
  private dataOf(t: Transaction): Record<string, unknown> {
    const r = t.request;
    const party = t.resource === 'deposits' ? { payer: r.payer } : t.resource === 'payouts' ? { recipient: r.recipient } : {};
    return {
      [ID_FIELD[t.resource]]: t.id,
      ...(t.resource === 'refunds' ? { depositId: r.depositId } : {}),
      status: t.status,
      amount: t.amount.toString(),
      currency: r.currency,
      ...party,
      ...(typeof r.clientReferenceId === 'string' ? { clientReferenceId: r.clientReferenceId } : {}),
      created: t.created,
      ...(t.status === COMPLETED ? { providerTransactionId: `SIM-${t.id.slice(0, 8)}` } : {}),
      ...(t.failureReason ? { failureReason: t.failureReason } : {}),
    };
  }

  private initiate(resource: Resource, raw: string, body: unknown): Answer | 'hang' {
    const idField = ID_FIELD[resource];
    if (!isObject(body)) return rejected(400, idField, undefined, 'INVALID_INPUT', `Unable to parse the request body: ${raw.slice(0, 40)}`);
    const id = body[idField];
    const unsupported = Object.keys(body).find((k) => !FIELDS[resource].includes(k));
    if (unsupported) return rejected(400, idField, id, 'UNSUPPORTED_PARAMETER', `Unsupported parameter ${unsupported}`);
    const missing = [idField, ...(resource === 'refunds' ? ['depositId'] : ['amount', 'currency'])].find((k) => body[k] === undefined);
    if (missing) return rejected(400, idField, id, 'MISSING_PARAMETER', `Missing parameter ${missing}`);
    if (typeof id !== 'string' || !UUID.test(id)) return rejected(400, idField, id, 'INVALID_PARAMETER', `${idField} must be a UUID`);
    const known = this.transaction(resource, id);
    if (known) return { http: 200, body: { [idField]: id, status: 'DUPLICATE_IGNORED', created: known.created } };
    const checked = resource === 'refunds' ? this.checkRefund(body) : this.checkPayment(resource, body);
    if ('http' in checked) return checked;
    const t: Transaction = {
      resource, id, status: 'ACCEPTED', request: body, created: new Date(this.now()).toISOString(),
      planned: checked.planned, amount: checked.amount, refundable: resource === 'deposits' ? checked.amount : 0n, forced: false,
    };
    this.transactions.set(`${resource}:${id}`, t);
    const fault = this.nextFault;
    this.nextFault = undefined;
    if (fault === 'hang') return 'hang';
    if (fault === 'error') return { http: 500, body: { failureReason: { failureCode: 'UNKNOWN_ERROR', failureMessage: 'Unable to process request due to an unknown problem' } } };
    return { http: 200, body: { [idField]: id, status: 'ACCEPTED', created: t.created } };
  }

  /** A deposit's or payout's party, currency and amount; its planned outcome by the test numbers. */
  private checkPayment(resource: 'deposits' | 'payouts', body: Record<string, unknown>): Answer | { planned: string; amount: bigint } {
    const idField = ID_FIELD[resource];
    const id = body[idField];
    const party = resource === 'deposits' ? body.payer : body.recipient;
    const details = isObject(party) ? party.accountDetails : undefined;
    if (!isObject(party) || !isObject(details) || details.phoneNumber === undefined || details.provider === undefined) {
      return rejected(400, idField, id, 'MISSING_PARAMETER', `Missing ${resource === 'deposits' ? 'payer' : 'recipient'} account details`);
    }
    if (party.type !== 'MMO') return rejected(400, idField, id, 'INVALID_PARAMETER', 'The party type must be MMO');
    const provider = PROVIDERS[String(details.provider)];
    if (!provider || this.options.inactiveProviders?.includes(String(details.provider))) {
      return rejected(200, idField, id, 'INVALID_PROVIDER', `The provider ${String(details.provider)} is not valid for the request`);
    }
    if (body.currency !== provider.currency) return rejected(200, idField, id, 'INVALID_CURRENCY', `${String(body.currency)} is not supported by the provider`);
    const phone = String(details.phoneNumber);
    if (!/^\d+$/.test(phone) || !phone.startsWith(provider.dial) || !provider.nationalDigits.includes(phone.length - provider.dial.length)) {
      return rejected(200, idField, id, 'INVALID_PHONE_NUMBER', `The phone number ${phone} seems to be invalid for the provider`);
    }
    const amount = this.amountOf(body.amount, idField, id);
    if (typeof amount !== 'bigint') return amount;
    return { planned: plannedOutcome(resource, phone), amount };
  }

  /** A refund names a COMPLETED deposit; its amount (the rest of the deposit when absent) fits in what is left. */
  private checkRefund(body: Record<string, unknown>): Answer | { planned: string; amount: bigint } {
    const id = body.refundId;
    const deposit = this.transaction('deposits', String(body.depositId));
    if (!deposit || deposit.status !== COMPLETED) return rejected(400, 'refundId', id, 'INVALID_PARAMETER', 'depositId does not name a completed deposit');
    if (body.currency !== undefined && body.currency !== deposit.request.currency) {
      return rejected(200, 'refundId', id, 'INVALID_CURRENCY', 'The currency is not the deposit\'s');
    }
    const amount = body.amount === undefined ? deposit.refundable : this.amountOf(body.amount, 'refundId', id);
    if (typeof amount !== 'bigint') return amount;
    if (deposit.refundable === 0n) return rejected(200, 'refundId', id, 'DEPOSIT_ALREADY_REFUNDED', 'The deposit has been refunded already');
    if (amount > deposit.refundable) return rejected(200, 'refundId', id, 'AMOUNT_TOO_LARGE', 'The amount is more than is left to refund');
    deposit.refundable -= amount;
    return { planned: COMPLETED, amount };
  }

  /** An amount string: digits (XAF and XOF take no decimals), within the account's limits. */
  private amountOf(value: unknown, idField: string, id: unknown): bigint | Answer {
    if (typeof value !== 'string' || !/^(0|[1-9]\d{0,22})(\.\d{1,2})?$/.test(value)) {
      return rejected(400, idField, id, 'INVALID_PARAMETER', 'The amount must be a string such as "100"');
    }
    if (value.includes('.')) return rejected(200, idField, id, 'INVALID_AMOUNT', 'The provider does not support decimals in the amount');
    const amount = BigInt(value);
    const { min, max } = this.options.amountBounds ?? { min: 100n, max: 1_000_000n };
    if (amount < min || amount > max) return rejected(200, idField, id, 'AMOUNT_OUT_OF_BOUNDS', `The amount must be between ${min} and ${max}`);
    return amount;
  }

  /** The request pawaPay would send for a payment's callback, in the given mode. */
  private callbackFor(resource: Resource, id: string, url: string, mode: CallbackMode = 'signed'): { headers: Record<string, string>; body: string } {
    const data = this.dataOf(this.must(resource, id));
    const body = JSON.stringify(data);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (mode === 'unsigned') return { headers, body };
    const signing = this.options.signing;
    if (!signing) throw new Error('the simulator was started without a signing key');
    const key = mode === 'wrong-key' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey : signing.privateKey;
    Object.assign(headers, signedHeaders(body, new URL(url), signing.keyId, key, this.now()));
    // A body changed after signing: its digest no longer matches.
    return { headers, body: mode === 'tampered' ? JSON.stringify({ ...data, status: COMPLETED, amount: '999999' }) : body };
  }

  /** POSTs a payment's callback to `url`; answers the HTTP status received. */
  async sendCallback(resource: Resource, id: string, url: string, mode: CallbackMode = 'signed'): Promise<number> {
    const { headers, body } = this.callbackFor(resource, id, url, mode);
    const res = await fetch(url, { method: 'POST', headers, body });
    await res.arrayBuffer();
    return res.status;
  }
}

function plannedOutcome(resource: 'deposits' | 'payouts', phone: string): string {
  const series = TEST_NUMBERS.find((s) => phone.startsWith(s.prefix) && phone.length === s.prefix.length + 3);
  return series?.[resource][phone.slice(-3)] ?? COMPLETED;
}

/** RFC 9421 headers as pawaPay signs its callbacks (docs: signatures), written here from the RFC. */
function signedHeaders(body: string, url: URL, keyId: string, key: KeyObject, nowMs: number): Record<string, string> {
  const created = Math.floor(nowMs / 1000);
  const values: Array<[string, string]> = [
    ['@method', 'POST'],
    ['@authority', url.host],
    ['@path', url.pathname],
    ['signature-date', new Date(nowMs).toISOString()],
    ['content-digest', `sha-512=:${createHash('sha512').update(body).digest('base64')}:`],
    ['content-type', 'application/json'],
  ];
  const params = `(${values.map(([n]) => `"${n}"`).join(' ')});alg="ecdsa-p256-sha256";keyid="${keyId}";created=${created};expires=${created + 60}`;
  const base = [...values.map(([n, v]) => `"${n}": ${v}`), `"@signature-params": ${params}`].join('\n');
  // Node signs ECDSA as ASN.1 DER by default, which is what pawaPay's callbacks carry.
  const signature = sign('sha256', Buffer.from(base, 'utf8'), key).toString('base64');
  return {
    'content-digest': values[4]![1],
    'signature-date': values[3]![1],
    'signature-input': `sig-pp=${params}`,
    signature: `sig-pp=:${signature}:`,
  };
}
