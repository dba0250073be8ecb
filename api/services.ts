// What the HTTP API is given: the services every handler has (commands/services.ts) and what only
// the API reads (the projector for the operator's projection routes, the API-key cache, the operator
// token). The composition root (app/app.ts) builds one of these.
import type { Services } from '../commands/services.ts';
import type { Projector } from '../projections/projector.ts';
import type { MerchantRowCache } from '../projections/merchant-row-cache.ts';
import type { KeyRow } from '../projections/api-keys.ts';

export interface ApiServices extends Services {
  projector: Projector;
  /** The operator token in force (ADMIN_TOKEN, or the one generated at first start). */
  adminToken: string;
  /** API-key rows as the read model has them, cleared by the projector on merchant events. */
  keyCache: MerchantRowCache<KeyRow>;
}
