// HTTP/1.1 requires Host (RFC 9112 §3.2); the HTTP server leaves the refusal to us (http-server.ts).
import type { NextFunction, Request, Response } from 'express';
import { sendError } from '../errors.ts';

export function requireHost(req: Request, res: Response, next: NextFunction): void {
  if (req.httpVersion === '1.1' && req.headers.host === undefined) return sendError(res, 'bad_request', 'HTTP/1.1 requests need a Host header');
  next();
}
