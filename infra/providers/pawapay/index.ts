// The pawaPay v2 adapter (CONTRACT §15): an aggregator carrying legs of the operators in
// operators.ts, over its Merchant API (Bearer token). A thin mapping: requests.ts builds the calls,
// transformers.ts reads the answers, signatures.ts checks signed callbacks; this file decides what
// each answer means for the gateway.
//
//   initiation answered ACCEPTED           → pending (pawaPay has the leg)
//                       DUPLICATE_IGNORED  → pawaPay had it already: its status is asked
//                       REJECTED           → LegNotTaken with the failure, whatever the HTTP status
//                       other 4xx          → LegNotTaken (a documented refusal: bad token, bad body)
//                       5xx, time-out, reset → in doubt (ProviderInDoubt): the status is asked later
//   status  FOUND → the mapped status; NOT_FOUND → undefined (never seen: initiate again, same id);
//           unreachable or unreadable → ProviderInDoubt (never LegNotTaken: that is an initiation's answer)
//   callback → a hint naming the leg, never an outcome: the gateway re-reads the status
//
// The API token goes in the Authorization header only: no message or log line here carries it.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { inDoubtIfFailed, ProviderHttp, ProviderInDoubt, type ProviderResponse } from '../http.ts';
import { uuidV4For } from '../leg-id.ts';
import {
  CallbackRejected, LegNotTaken, type CallbackReading, type CallbackRequest, type InitiateLeg, type LegLookup,
  type PawapaySettings, type ProviderAdapter, type ProviderStatus, type RemoteProviderOptions,
} from '../types.ts';
import { pawapayProvider } from './operators.ts';
import { initiationRequest, PUBLIC_KEYS_PATH, statusPath } from './requests.ts';
import { checkSignature } from './signatures.ts';
import { callbackLegId, initiationOf, statusAnswerOf } from './transformers.ts';

const NAME = 'pawapay';
/** An unknown key id fetches pawaPay's public keys again at most this often: a forged id must not turn every callback into a call to pawaPay. */
const KEY_REFETCH_MS = 60_000;

export class PawapayProvider implements ProviderAdapter {
  readonly name = NAME;
  private readonly keys = new Map<string, KeyObject>();
  private keysFetchedAtMs = Number.NEGATIVE_INFINITY;
  private keysFetch: Promise<void> | undefined;
  /** Its connections to pawaPay, kept alive between calls. */
  private readonly http: ProviderHttp;

  constructor(
    private readonly settings: PawapaySettings,
    private readonly options: RemoteProviderOptions,
  ) {
    this.http = new ProviderHttp(NAME, options.timeoutMs);
  }

  serves(operatorCode: string): boolean {
    return pawapayProvider(operatorCode) !== undefined;
  }

  /** depositId, payoutId, refundId: UUIDs v4 derived from the reference alone, so every retry sends the same one. */
  legId(reference: string): string {
    return uuidV4For(reference);
  }

  async initiate(leg: InitiateLeg): Promise<ProviderStatus> {
    const legId = this.legId(leg.reference);
    const request = initiationRequest(leg, legId);
    const res = await this.call('POST', request.path, request.body);
    const answer = initiationOf(res.json);
    if (answer.status === 'REJECTED') {
      throw new LegNotTaken(`pawapay rejected the ${leg.kind}: ${answer.failure.code}`, answer.failure);
    }
    if (res.status >= 500) throw new ProviderInDoubt(`pawapay answered the ${leg.kind} with HTTP ${res.status}`);
    if (res.status >= 400) {
      const code = answer.failure ? ` ${answer.failure.code}` : '';
      throw new LegNotTaken(`pawapay refused the ${leg.kind}: HTTP ${res.status}${code}`, answer.failure);
    }
    if (res.status >= 200 && res.status < 300 && answer.status === 'ACCEPTED') return { state: 'pending', providerReference: legId };
    if (res.status >= 200 && res.status < 300 && answer.status === 'DUPLICATE_IGNORED') {
      // pawaPay has the leg: its status query throws only ProviderInDoubt, never "not taken".
      const known = await this.status({ reference: leg.reference, kind: leg.kind });
      if (known) return known;
      throw new ProviderInDoubt(`pawapay reported the ${leg.kind} as a duplicate but does not find it`);
    }
    throw new ProviderInDoubt(`pawapay answered the ${leg.kind} with HTTP ${res.status} and no initiation status`);
  }

  async status(leg: LegLookup): Promise<ProviderStatus | undefined> {
    const legId = this.legId(leg.reference);
    // Unreachable is not "never seen": only pawaPay's NOT_FOUND says that.
    const res = await inDoubtIfFailed(this.call('GET', statusPath(leg.kind, legId)), `pawapay status of a ${leg.kind}`);
    const answer = res.status === 200 ? statusAnswerOf(res.json, legId) : 'unreadable';
    if (answer === 'unreadable') throw new ProviderInDoubt(`pawapay status of a ${leg.kind} answered HTTP ${res.status} without a status`);
    return answer;
  }

  async readCallback(req: CallbackRequest): Promise<CallbackReading> {
    const legId = callbackLegId(req.body);
    if (!legId) throw new CallbackRejected('a pawaPay callback is a JSON object carrying depositId, payoutId or refundId');
    const check = await checkSignature(req, (keyId) => this.publicKey(keyId), this.options.now());
    if (check.kind === 'failed') return { kind: 'ignored', why: `pawapay callback signature: ${check.why}` };
    return { kind: 'hint', legId };
  }

  private call(method: 'GET' | 'POST', path: string, body?: Record<string, unknown>): Promise<ProviderResponse> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.settings.apiToken}`, accept: 'application/json' };
    if (body) headers['content-type'] = 'application/json';
    const url = `${this.settings.baseUrl.replace(/\/+$/, '')}${path}`;
    return this.http.call(url, { method, headers, ...(body ? { body: JSON.stringify(body) } : {}) });
  }

  /** The public key pawaPay signs callbacks with, by its id: fetched once, kept, fetched again for an id not seen yet. */
  private async publicKey(keyId: string): Promise<KeyObject | undefined> {
    if (!this.keys.has(keyId)) {
      if (!this.keysFetch && this.options.now() - this.keysFetchedAtMs >= KEY_REFETCH_MS) {
        this.keysFetch = this.fetchKeys().finally(() => { this.keysFetch = undefined; });
      }
      // A fetch under way (this call's or another callback's) may bring the key: wait for it.
      if (this.keysFetch) await this.keysFetch;
    }
    return this.keys.get(keyId);
  }

  /** GET /v2/public-key/http: `[{id, key}]`, each key a PEM public key. A failed fetch leaves the keys as they were. */
  private async fetchKeys(): Promise<void> {
    this.keysFetchedAtMs = this.options.now();
    let res: ProviderResponse;
    try {
      res = await this.call('GET', PUBLIC_KEYS_PATH);
    } catch {
      return; // unreachable: the callback is ignored, and polling settles the leg
    }
    if (res.status !== 200 || !Array.isArray(res.json)) return;
    for (const entry of res.json as unknown[]) {
      const { id, key } = (entry ?? {}) as { id?: unknown; key?: unknown };
      if (typeof id !== 'string' || typeof key !== 'string') continue;
      try {
        this.keys.set(id, createPublicKey(key));
      } catch {
        // not a key we can read: its callbacks fail verification
      }
    }
  }
}
