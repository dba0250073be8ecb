// What the pipeline's middlewares hand on to the handler, kept on res.locals: who is calling
// (authenticate.ts) and the request as validated (validate.ts). respond.ts builds the handler's Ctx from it.
import type { Response } from 'express';
import type { MerchantCredential } from '../auth.ts';

interface RequestState {
  /** Set on merchant-authenticated operations. */
  merchantId?: string;
  /** The key and secret (as its stored hash) that authenticated it: an open event stream ends with them. */
  credential?: MerchantCredential;
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
}

export const stateOf = (res: Response): RequestState => res.locals as RequestState;
