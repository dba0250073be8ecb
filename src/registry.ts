// What the service is made of: every API module, projection and worker, listed once.
import type { ApiModule } from './api/module.ts';
import type { Projection } from './projections/projection.ts';
import type { Services } from './services.ts';
import { adminMerchants } from './api/routes/admin-merchants.ts';
import { operatorsModule } from './api/routes/operators.ts';
import { merchantsProjection } from './projections/merchants.ts';
import { eventForwarder } from './workers/event-forwarder.ts';

export const apiModules: ApiModule[] = [
  adminMerchants,
  operatorsModule,
];

export const projections: Projection[] = [
  merchantsProjection,
];

/** A background process on the bus or a schedule; `start` returns its stop function. */
export interface Worker {
  name: string;
  start(services: Services): Promise<() => Promise<void>>;
}

export const workers: Worker[] = [
  eventForwarder,
];
