// What a worker is: the composition root (app/registry.ts) lists them and starts them all.
import type { Services } from '../commands/services.ts';

/** A background process on the bus or a schedule; `start` returns its stop function. */
export interface Worker {
  name: string;
  /** Event types this worker consumes from the bus (the forwarder publishes only those, BUS_FORWARD). */
  consumes?: () => string[];
  start(services: Services): Promise<() => Promise<void>>;
}
