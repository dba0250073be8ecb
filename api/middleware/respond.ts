// The end of the pipeline: the handler's Ctx from what the middlewares before established
// (request-state.ts), the answer, and the reply sent as it is.
import { rawBodyOf } from './json-body.ts';
import type { Request, RequestHandler, Response } from 'express';
import type { ApiServices } from '../services.ts';
import type { Ctx, Reply } from '../module.ts';
import { requestIdOf } from './request-id.ts';
import { stateOf } from './request-state.ts';

/** A handler as the route runs it: directly, or once per Idempotency-Key (idempotency.ts). */
export type Answer = (ctx: Ctx, req: Request) => Promise<Reply>;

function send(res: Response, reply: Reply): void {
  if ('stream' in reply) return reply.stream(res);
  if (reply.headers) for (const [k, v] of Object.entries(reply.headers)) res.setHeader(k, v);
  if ('text' in reply) {
    res.status(reply.status).type(reply.contentType).send(reply.text);
  } else {
    res.status(reply.status).json(reply.body);
  }
}

function contextOf(services: ApiServices, req: Request, res: Response): Ctx {
  const requestId = requestIdOf(req);
  const state = stateOf(res);
  return {
    services, log: services.log.child({ request_id: requestId }), requestId, merchantId: state.merchantId ?? '',
    ...(state.credential ? { credential: state.credential } : {}),
    body: state.body, params: state.params ?? {}, query: state.query ?? {},
    headers: req.headers, clientIp: req.socket.remoteAddress ?? '',
    raw: { method: req.method, path: req.originalUrl, authority: req.headers.host ?? '', body: rawBodyOf(req) },
  };
}

export function respond(services: ApiServices, answer: Answer): RequestHandler {
  return async (req, res) => {
    send(res, await answer(contextOf(services, req, res), req));
  };
}
