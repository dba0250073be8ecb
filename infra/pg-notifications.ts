// One LISTEN connection for a channel, opened on first use and re-opened after it drops: wake-ups
// across processes without a connection per waiting reader. A notification is a hint only (one can
// be lost while the connection is down): its users poll as well.
import pg from 'pg';

export class PgNotifications {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly url: string, private readonly channel: string, private readonly onNotify: () => void) {}

  /** Connects and listens unless already done; a failure is left to the next call (the caller polls meanwhile). */
  ensure(): Promise<void> {
    if (this.closed || this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => { this.connecting = undefined; });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    const drop = () => {
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
    };
    client.on('error', drop);
    client.on('end', drop);
    try {
      await client.connect();
      client.on('notification', () => this.onNotify());
      await client.query(`LISTEN ${this.channel}`);
    } catch {
      drop();
      return;
    }
    if (this.closed) return void client.end().catch(() => undefined);
    this.client = client;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting;
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }
}
