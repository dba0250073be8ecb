// The MTN MoMo Open API adapter (CONTRACT §15): collections by request-to-pay, disbursements by
// transfer, refunds by the Disbursements refund call, for MTN's operators in CM, BJ and CI.
//
// Every leg goes under X-Reference-Id = uuidV4For(our reference), the same on every retry, so MTN's
// 409 RESOURCE_ALREADY_EXIST means it has the leg already: its status is then read and answered.
// An initiation answered 202 is pending (MTN answers nothing more until asked). A 4xx documents a
// refusal (LegNotTaken, with MTN's code as the failure); a 5xx or a time-out is in doubt
// (ProviderInDoubt). Callbacks are hints only: MTN does not sign them.
import { inDoubtIfFailed, ProviderHttp, ProviderInDoubt, type ProviderRequest, type ProviderResponse } from '../http.ts';
import { uuidV4For } from '../leg-id.ts';
import {
  CallbackRejected, LegNotTaken, type CallbackReading, type CallbackRequest, type InitiateLeg, type LegLookup,
  type MtnMomoSettings, type ProviderAdapter, type ProviderStatus, type RemoteProviderOptions,
} from '../types.ts';
import {
  accountHolderPath, apiHeaders, callbackUrl, initiateBody, initiatePath, msisdn, productOf, statusPath, type Product,
} from './requests.ts';
import { MtnTokens, TokenUnavailable } from './tokens.ts';
import { MTN_MOMO, accountInactive, errorBody, failureOf, refusalOf, statusFromMtn } from './transformers.ts';

const OPERATORS = new Set(['CM_MTN_MOMO', 'BJ_MTN_MOMO', 'CI_MTN_MOMO']);
/**
 * A production target environment is one country's MTN (its accounts exist nowhere else): one set
 * of credentials carries that country's operator only. The sandbox plays all three.
 */
const COUNTRY_OF_ENVIRONMENT: Record<string, string> = { mtncameroon: 'CM_MTN_MOMO', mtnbenin: 'BJ_MTN_MOMO', mtnivorycoast: 'CI_MTN_MOMO' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Call {
  method: 'GET' | 'POST';
  path: string;
  referenceId?: string;
  callbackUrl?: string | undefined;
  body?: Record<string, unknown>;
}

export class MtnMomoProvider implements ProviderAdapter {
  readonly name = MTN_MOMO;
  private readonly tokens: Record<Product, MtnTokens>;
  /** Its connections to MTN, kept alive between calls (tokens and legs alike). */
  private readonly http: ProviderHttp;

  constructor(private readonly settings: MtnMomoSettings, private readonly options: RemoteProviderOptions) {
    const http = new ProviderHttp(MTN_MOMO, options.timeoutMs);
    this.http = http;
    const source = (product: Product) => new MtnTokens({ baseUrl: settings.baseUrl, product, credentials: settings[product], http, now: options.now });
    this.tokens = { collection: source('collection'), disbursement: source('disbursement') };
  }

  serves(operatorCode: string): boolean {
    const only = COUNTRY_OF_ENVIRONMENT[this.settings.targetEnvironment];
    return only ? operatorCode === only : OPERATORS.has(operatorCode);
  }

  legId(reference: string): string {
    return uuidV4For(reference);
  }

  async initiate(leg: InitiateLeg): Promise<ProviderStatus> {
    const legId = this.legId(leg.reference);
    const refundOf = leg.refundOf === undefined ? undefined : uuidV4For(leg.refundOf);
    // Built first: a leg MTN could not accept (no E.164 phone, no refunded collection) is never sent.
    const body = initiateBody(leg, legId, refundOf, this.settings.currencyOverride ?? leg.currency);
    if (leg.kind === 'disbursement' && await this.payeeInactive(leg.phone)) {
      // A transfer sent under this reference by an earlier start (after a crash, a redelivery) is
      // MTN's to answer: it may pay it whatever the account says now.
      const sent = await this.knownStatus(leg, `${MTN_MOMO} ${leg.kind} ${legId}`);
      if (sent) return sent;
      const failure = failureOf('PAYEE_NOT_FOUND', 'the payee has no active MoMo account');
      return { state: 'failed', providerReference: legId, reason: failure.code, failure };
    }
    const product = productOf(leg.kind);
    let res: ProviderResponse;
    try {
      res = await this.call(product, {
        method: 'POST', path: initiatePath(leg.kind), referenceId: legId, body,
        callbackUrl: callbackUrl(this.options.publicBaseUrl, legId),
      });
    } catch (err) {
      // No token: the leg itself was never sent.
      if (err instanceof TokenUnavailable) throw new LegNotTaken(err.message);
      throw err;
    }
    return this.initiated(leg, legId, res);
  }

  /** What an initiation's answer means for the leg (see the head of this file). */
  private async initiated(leg: InitiateLeg, legId: string, res: ProviderResponse): Promise<ProviderStatus> {
    if (res.status >= 200 && res.status < 300) return { state: 'pending', providerReference: legId };
    const what = `${MTN_MOMO} ${leg.kind} ${legId}`;
    // MTN's 409 is RESOURCE_ALREADY_EXIST: a leg under this reference exists. Read whatever its body
    // says as that, never as a refusal: a refusal would send the same leg to another provider.
    if (res.status === 409) {
      const known = await this.knownStatus(leg, what);
      if (!known) throw new ProviderInDoubt(`${what}: a duplicate that its status query does not find`);
      return known;
    }
    if (res.status >= 400 && res.status < 500) {
      const failure = refusalOf(res.status, res.json);
      throw new LegNotTaken(`${what} refused (HTTP ${res.status} ${failure.code})`, failure);
    }
    throw new ProviderInDoubt(`${what}: HTTP ${res.status}`);
  }

  async status(leg: LegLookup): Promise<ProviderStatus | undefined> {
    const legId = this.legId(leg.reference);
    // Unreachable is not "never seen": only MTN's own 404 says that.
    const res = await inDoubtIfFailed(this.call(productOf(leg.kind), { method: 'GET', path: statusPath(leg.kind, legId) }), `${MTN_MOMO} ${leg.kind} ${legId} status`);
    if (res.status === 200) return statusFromMtn(legId, res.json);
    if (res.status === 404 && errorBody(res.json).code === 'RESOURCE_NOT_FOUND') return undefined;
    throw new Error(`${MTN_MOMO} ${leg.kind} ${legId} status: HTTP ${res.status}`);
  }

  /** The leg's status, where an unanswered query is in doubt (never an error that could read as "not taken"). */
  private knownStatus(leg: InitiateLeg, what: string): Promise<ProviderStatus | undefined> {
    return inDoubtIfFailed(this.status({ reference: leg.reference, kind: leg.kind }), `${what}: its status`);
  }

  /**
   * Whether MTN says the payee's account is not active. The check only saves a transfer bound to
   * fail: when it cannot be answered (an error, a time-out), the transfer goes ahead and MTN decides.
   */
  private async payeeInactive(phone: string): Promise<boolean> {
    try {
      const res = await this.call('disbursement', { method: 'GET', path: accountHolderPath(msisdn(phone)) });
      return res.status === 200 && accountInactive(res.json);
    } catch {
      return false;
    }
  }

  /** One call with the product's token; a 401 drops the token and the call is made once more with a new one. */
  private async call(product: Product, c: Call): Promise<ProviderResponse> {
    const send = async () => {
      const token = await this.tokens[product].token();
      const headers = apiHeaders({
        token, subscriptionKey: this.settings[product].subscriptionKey, targetEnvironment: this.settings.targetEnvironment,
        referenceId: c.referenceId, callbackUrl: c.callbackUrl, json: c.body !== undefined,
      });
      const url = `${this.settings.baseUrl.replace(/\/+$/, '')}${c.path}`;
      const init: ProviderRequest = { method: c.method, headers, ...(c.body ? { body: JSON.stringify(c.body) } : {}) };
      return { token, res: await this.http.call(url, init) };
    };
    const first = await send();
    if (first.res.status !== 401) return first.res;
    this.tokens[product].invalidate(first.token);
    return (await send()).res;
  }

  /** MTN's callbacks carry no signature: a well-formed one is a hint to read the leg's status again. */
  async readCallback(req: CallbackRequest): Promise<CallbackReading> {
    const legId = req.legId;
    if (typeof legId !== 'string' || !UUID.test(legId)) throw new CallbackRejected('mtn_momo callback: no leg id in its URL');
    const b = req.body;
    if (typeof b !== 'object' || b === null || Array.isArray(b)) throw new CallbackRejected('mtn_momo callback: the body is not a JSON object');
    return { kind: 'hint', legId: legId.toLowerCase() };
  }
}
