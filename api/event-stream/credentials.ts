// An open event stream belongs to the credential that opened it (CONTRACT §17): revoking its key,
// the key's expiry, the end of its old secret's grace, or its merchant set inactive ends the stream
// within CREDENTIAL_CHECK_MS, which frees its slot. Authentication runs once per request, and a
// stream is one request that never ends, so the process reads its open streams' keys again, all in
// one query, every CREDENTIAL_CHECK_MS. The read models are shared by every API process, so a
// revocation through any process reaches every stream.
import type { Knex } from 'knex';
import type { Clock } from '../../infra/clock.ts';
import { readKeyRows } from '../../projections/api-keys.ts';
import { credentialStands, type MerchantCredential } from '../auth.ts';

/** Well inside the contract's 5 seconds, with a read that takes a while on a loaded database. */
export const CREDENTIAL_CHECK_MS = 2_000;

export interface CredentialHolder {
  readonly credential: MerchantCredential;
  close(): void;
}

export class StreamCredentialWatch {
  private readonly timer: NodeJS.Timeout;
  private checking = false;

  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly open: () => Iterable<CredentialHolder>,
    private readonly onError: (err: unknown) => void,
  ) {
    this.timer = setInterval(() => void this.check(), CREDENTIAL_CHECK_MS);
    this.timer.unref();
  }

  /** Ends every open stream whose credential no longer stands. */
  async check(): Promise<void> {
    const holders = [...this.open()];
    if (holders.length === 0 || this.checking) return;
    this.checking = true;
    try {
      const rows = await readKeyRows(this.knex, [...new Set(holders.map((h) => h.credential.apiKey))]);
      const now = this.clock.now().getTime();
      for (const h of holders) {
        if (!credentialStands(rows.get(h.credential.apiKey), h.credential.secretHash, now)) h.close();
      }
    } catch (err) {
      this.onError(err); // tried again at the next tick: a stream outlives its key by one more interval at most
    } finally {
      this.checking = false;
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
