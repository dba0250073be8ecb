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
