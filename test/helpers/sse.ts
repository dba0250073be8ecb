// A small Server-Sent Events client for the event feed tests (GET /events/stream): it records every
// event (id, data) and comment as they arrive, and can be cut off at any moment (the socket
// destroyed, as a dropped connection is).
import http from 'node:http';

export interface SseEvent {
  id: string;
  data: string;
}

export interface SseClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body of a refused request (its status is not 200). */
  text: string;
  events: SseEvent[];
  comments: string[];
  /** Resolves when the server ends the stream (or the socket closes). */
  ended: Promise<void>;
  /** Drops the connection at once. */
  destroy(): void;
}

function parseFrame(client: SseClient, frame: string): void {
  let id: string | undefined;
  const data: string[] = [];
  for (const line of frame.split('\n')) {
    if (line.startsWith(':')) client.comments.push(line.slice(1).trim());
    else if (line.startsWith('id: ')) id = line.slice(4);
    else if (line.startsWith('data: ')) data.push(line.slice(6));
  }
  if (id !== undefined) {
    const e = { id, data: data.join('\n') };
    client.events.push(e);
  }
}

/**
 * Opens a stream; resolves once the answer's headers (and, when refused, its body) are in. Its first
 * events may already be in `events` by then (they can arrive with the headers).
 */
export function openSse(url: string, headers: Record<string, string>): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      let buffer = '';
      let endedResolve!: () => void;
      const client: SseClient = {
        status: res.statusCode ?? 0, headers: res.headers, text: '', events: [], comments: [],
        ended: new Promise<void>((r) => { endedResolve = r; }),
        destroy: () => req.destroy(),
      };
      res.setEncoding('utf8');
      res.on('close', () => endedResolve());
      if (client.status !== 200) {
        res.on('data', (chunk: string) => { client.text += chunk; });
        res.on('end', () => resolve(client));
        return;
      }
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          parseFrame(client, buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
        }
      });
      res.on('error', () => endedResolve());
      resolve(client);
    });
    req.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
    });
  });
}

/** A client of the feed that drops its stream at random points and resumes from the last id it got. */
export interface FlakyFeedClient {
  /** Every event id received, in order, over every connection. */
  got: string[];
  /** How many connections it has made and dropped. */
  reconnects(): number;
  /** Lets it stop once it has every event the list shows, and waits for that. */
  finish(): Promise<void>;
}

/**
 * Runs the client until `finish()`: each connection (opened by `open` with the last id received)
 * is cut after a random time or a random number of events; a 429 (the dropped stream's slot not
 * freed yet) is retried. `listed` answers how many events the list shows after the start.
 */
export function flakyFeedClient(opts: {
  open: (lastEventId: string) => Promise<SseClient>;
  listed: () => Promise<number>;
  start: string;
  random: () => number;
  maxEventsPerConnection: number;
  maxConnectionMs: number;
}): FlakyFeedClient {
  const got: string[] = [];
  let stop = false;
  let reconnects = 0;
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const waitFor = async (s: SseClient, n: number) => {
    for (const end = Date.now() + 60_000; s.events.length < n && Date.now() < end;) await pause(20);
  };
  const running = (async () => {
    while (!stop || got.length < await opts.listed()) {
      const s = await opts.open(got.at(-1) ?? opts.start);
      if (s.status === 429) {
        await pause(50);
        continue;
      }
      if (s.status !== 200) throw new Error(`stream refused: ${s.status} ${s.text}`);
      const cutAfter = 1 + Math.floor(opts.random() * opts.maxEventsPerConnection);
      await Promise.race([pause(20 + opts.random() * opts.maxConnectionMs), waitFor(s, cutAfter), s.ended]);
      s.destroy();
      await s.ended;
      got.push(...s.events.map((e) => e.id));
      reconnects++;
      if (opts.random() < 0.5) await pause(opts.random() * 60);
    }
  })();
  return { got, reconnects: () => reconnects, finish: async () => { stop = true; await running; } };
}
