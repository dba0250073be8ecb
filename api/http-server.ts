// The Node HTTP server around the Express app, with its limits: how long a client may take to send
// its headers (slowloris) and its whole request, how large the headers may be. What Node's parser
// refuses before Express sees it (oversized or malformed headers, a time-out) is answered with the
// contract's error body instead of Node's empty one.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import type express from 'express';
import { errorBody } from './errors.ts';

export const MAX_HEADER_BYTES = 16 * 1024;

export interface HttpLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

export function createHttpServer(app: express.Express, limits: HttpLimits): http.Server {
  const requestTimeout = Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs);
  const server = http.createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout,
    maxHeaderSize: MAX_HEADER_BYTES,
    // Node would answer a missing Host with an empty 400; the app answers it with the error body.
    requireHostHeader: false,
    // Node checks the time-outs above on this period (30 s by default, which would let a slow
    // client hold its socket up to that much longer than the limit).
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
  }, app);
  server.keepAliveTimeout = 5_000;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerClientError(err, socket));
  return server;
}

const REFUSALS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', `Request headers are limited to ${MAX_HEADER_BYTES} bytes`],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request was not received in time'],
};

function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A connection already gone (reset, or a response under way) gets nothing more.
  if (err.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, reason, message] = REFUSALS[err.code ?? ''] ?? [400, 'Bad Request', 'Malformed HTTP request'];
  const requestId = randomUUID();
  const body = JSON.stringify(errorBody('bad_request', message, undefined, requestId));
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}
