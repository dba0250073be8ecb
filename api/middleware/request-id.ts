// Every response carries X-Request-Id: the caller's own when it is sane (so its logs and ours meet),
// else a fresh one. It is kept on the request as `id` (the dashboard reads it there too).
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,100}$/;

export function assignRequestId(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.header('x-request-id');
  const id = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  (req as Request & { id: string }).id = id;
  next();
}

export const requestIdOf = (req: Request): string => (req as Request & { id: string }).id;
