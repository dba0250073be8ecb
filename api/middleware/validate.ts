// The request checked against its operation's schemas (compiled from the OpenAPI document,
// validation.ts), after authentication: the path parameters and the query, then (after the
// Idempotency-Key, idempotency.ts) the body. Text the database could not store is refused here too.
import type { RequestHandler } from 'express';
import { DomainError, type ErrorDetail } from '../../domain/errors.ts';
import { describeErrors, type OperationValidator } from '../validation.ts';
import { unstorableField } from '../storable-text.ts';
import { stateOf } from './request-state.ts';

const MAX_JSON_DEPTH = 32;

function jsonDepth(value: unknown, depth = 0): number {
  if (depth > MAX_JSON_DEPTH) return depth;
  if (value && typeof value === 'object') {
    let max = depth + 1;
    for (const v of Object.values(value)) max = Math.max(max, jsonDepth(v, depth + 1));
    return max;
  }
  return depth;
}

export function validatePathAndQuery(v: OperationValidator): RequestHandler {
  return (req, res, next) => {
    const params = { ...req.params } as Record<string, string>;
    if (unstorableField(params) !== undefined) throw new DomainError('not_found', 'Resource not found');
    if (v.params && !v.params(params)) {
      const errors = v.params.errors ?? [];
      // A malformed id in a path names nothing: the same 404 as an unknown one. A value the caller
      // chose among a few (a wallet's currency) is a 400 naming it and what it accepts (validation.ts).
      const values = new Set(v.pathValues ?? []);
      if (errors.length === 0 || errors.some((e) => !values.has(e.instancePath.replace(/^\//, '').split('/')[0]!))) {
        throw new DomainError('not_found', 'Resource not found');
      }
      const details = describeErrors(errors, 'path.');
      throw new DomainError('bad_request', `Invalid path parameter: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, details);
    }
    const query = { ...(req.query as Record<string, unknown>) };
    const badQuery = unstorableField(query);
    if (badQuery !== undefined) {
      throw new DomainError('bad_request', 'Invalid query parameters', [{ field: `query.${badQuery}`, message: 'must not contain NUL or unpaired surrogates' }]);
    }
    if (v.query && !v.query(query)) {
      throw new DomainError('bad_request', 'Invalid query parameters', describeErrors(v.query.errors, 'query.'));
    }
    Object.assign(stateOf(res), { params, query });
    next();
  };
}

/** `check`: the operation's domain checks (module.ts BodyCheck), reported with the schema's problems. */
export function validateBody(v: OperationValidator, check?: (body: unknown) => ErrorDetail[]): RequestHandler {
  return (req, res, next) => {
    const body: unknown = req.body === undefined ? {} : req.body;
    if (jsonDepth(body) > MAX_JSON_DEPTH) {
      throw new DomainError('bad_request', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    const badField = unstorableField(body);
    if (badField !== undefined) {
      throw new DomainError('bad_request', 'The request body is invalid', [{ field: badField, message: 'must not contain NUL or unpaired surrogates' }]);
    }
    if (v.body && !v.body(body)) {
      const details = describeErrors(v.body.errors);
      // One answer for every problem: the domain's too, on the fields the schema found no fault with.
      const named = new Set(details.map((d) => d.field));
      for (const d of check?.(body) ?? []) if (!named.has(d.field)) details.push(d);
      throw new DomainError('bad_request', 'The request body is invalid', details);
    }
    stateOf(res).body = body;
    next();
  };
}
