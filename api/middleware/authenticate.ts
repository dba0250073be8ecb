// Who is calling (the credential checks are api/auth.ts), before anything about the request is
// looked at. A caller with too many recent failures is refused before its credentials are checked,
// so guessing secrets is throttled whether or not the key exists (throttle.ts).
import type { RequestHandler } from 'express';
import type { ApiServices } from '../services.ts';
import type { AuthKind } from '../module.ts';
import { authenticateAdmin, authenticateMerchant } from '../auth.ts';
import type { AuthFailures } from './throttle.ts';
import { stateOf } from './request-state.ts';

export function authenticate(services: ApiServices, kind: Exclude<AuthKind, 'public'>, failures: AuthFailures): RequestHandler {
  return async (req, res, next) => {
    const failed = failures.admit(req, kind === 'merchant' ? req.header('x-api-key') ?? '' : 'operator', services.clock.now().getTime());
    try {
      if (kind === 'merchant') {
        const credential = await authenticateMerchant(services, req.header('x-api-key'), req.header('x-api-secret'));
        stateOf(res).merchantId = credential.merchantId;
        stateOf(res).credential = credential;
      } else {
        authenticateAdmin(services.adminToken, req.header('authorization'));
      }
    } catch (err) {
      failed();
      throw err;
    }
    next();
  };
}
