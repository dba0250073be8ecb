// One open `GET /events/stream` (Server-Sent Events, CONTRACT.md §12): the merchant's events after
// a feed position, oldest first, as they are recorded. Each event is `id: <event id>` and `data:`
// the webhook envelope (the bytes the webhook body carries); an idle stream gets a comment every
// heartbeat so that proxies and clients see it alive.
//
// It holds no database connection while idle: the process's EventFeedWatch wakes it when its
// merchant has new events, and a wake-up reads the events after the last one sent (from the pool,
// a page at a time, honouring the socket's back-pressure). Writes happen in one pump at a time, so
// events go out in feed order, each once, and the client's Last-Event-ID is always the last one it
// received whole.
import type { Knex } from 'knex';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { feedAfter, type FeedEvent } from '../../projections/event-feed.ts';
import type { MerchantCredential } from '../auth.ts';

const PAGE = 100;

/** An event as SSE frames it: every line of the data a `data:` line (the envelope is one line of JSON; this holds whatever it is). */
function sseFrame(e: { id: string; body: string }): string {
  return `id: ${e.id}\n${e.body.split(/\r\n|\r|\n/).map((line) => `data: ${line}`).join('\n')}\n\n`;
}

export class EventStreamSession {
  private res: Response | undefined;
  private dirty = true;
  private pumping: Promise<void> | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly onClose: Array<() => void> = [];

  constructor(
    private readonly knex: Knex,
    /** Who opened it: the stream ends when this credential no longer stands (credentials.ts). */
    readonly credential: MerchantCredential,
    private position: bigint,
    private readonly heartbeatMs: number,
    private readonly log: Logger,
  ) {}

  get merchantId(): string {
    return this.credential.merchantId;
  }

  /** Sets where the stream starts (before it is attached): after this feed position. */
  startAfter(position: bigint): void {
    this.position = position;
  }

  /** Runs `f` once when the stream ends (client gone, shutdown, a failed read). */
  whenClosed(f: () => void): void {
    if (this.closed) f();
    else this.onClose.push(f);
  }

  /** Starts answering on `res`: the headers, then every event after the position, then live ones. */
  attach(res: Response): void {
    if (this.closed) return void res.end();
    this.res = res;
    res.on('close', () => this.close());
    res.on('error', () => this.close()); // a write to a socket that broke: the client resumes with Last-Event-ID
    if (res.destroyed) return this.close();
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-store');
    // Reverse proxies (nginx) buffer responses unless told not to: events must go out as written.
    res.setHeader('X-Accel-Buffering', 'no');
    // The connection ends with the stream: one left open for reuse would hold a shutdown up to the keep-alive time-out.
    res.setHeader('Connection', 'close');
    res.socket?.setNoDelay(true);
    res.flushHeaders();
    this.write(': stream open\n\n');
    this.wake();
  }

  /** New events may exist past the position: read and send them (now, or after the running pump). */
  wake(): void {
    this.dirty = true;
    if (this.pumping || !this.res || this.closed) return;
    this.pumping = this.pump()
      .catch((err: unknown) => {
        this.log.warn({ err, merchant_id: this.merchantId }, 'event stream read failed; closing it (the client resumes with Last-Event-ID)');
        this.close();
      })
      .finally(() => {
        this.pumping = undefined;
        if (this.dirty) this.wake();
      });
  }

  private async pump(): Promise<void> {
    while (this.dirty && !this.closed) {
      this.dirty = false;
      const events: FeedEvent[] = await feedAfter(this.knex, this.merchantId, this.position, PAGE);
      if (this.closed || events.length === 0) continue;
      const flushed = this.write(events.map(sseFrame).join(''));
      this.position = events[events.length - 1]!.position;
      if (events.length === PAGE) this.dirty = true;
      if (!flushed) await this.drained();
    }
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const res = this.res!;
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  }

  /** Writes a chunk and re-arms the heartbeat; answers whether the socket took it without buffering. */
  private write(chunk: string): boolean {
    const res = this.res!;
    if (this.closed || res.writableEnded) return true;
    const flushed = res.write(chunk);
    clearTimeout(this.heartbeat);
    this.heartbeat = setTimeout(() => this.write(': keep-alive\n\n'), this.heartbeatMs);
    return flushed;
  }

  /** Ends the stream (idempotent); a client reconnects with Last-Event-ID. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.heartbeat);
    if (this.res && !this.res.writableEnded) this.res.end();
    for (const f of this.onClose.splice(0)) f();
  }
}
