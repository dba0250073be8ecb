// After authentication, on merchant operations: the API key must hold the scope the operation
// declares (`x-scope`, CONTRACT §18), or the call is refused 403 `forbidden` naming the scope
// missing, before anything about the request is looked at.
import type { RequestHandler } from 'express';
import type { Operation } from '../module.ts';
import { DomainError } from '../../domain/errors.ts';
import { grants } from '../../domain/api-key-scopes.ts';
import { stateOf } from './request-state.ts';

/** The check for one operation; throws at start-up for a merchant operation that declares no scope. */
export function requireScope(op: Operation): RequestHandler {
  const needed = op['x-scope'];
  if (!needed) throw new Error(`merchant operation ${op.operationId} declares no x-scope`);
  if (needed === 'any') return (_req, _res, next) => next();
  return (_req, res, next) => {
    const held = stateOf(res).credential?.scopes ?? [];
    if (!grants(held, needed)) throw new DomainError('forbidden', `This API key lacks the scope ${needed}`);
    next();
  };
}

