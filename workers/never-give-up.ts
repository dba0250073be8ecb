// Consumers whose messages move money or record what a merchant must be told (start a leg, start a
// collection, record a webhook event) never dead-letter: a dropped trigger is a payment stuck in
// `pending` for ever, or a webhook never sent. They retry with the bus's capped backoff until the
// cause is fixed (a provider outage, a database fail-over), and say so loudly while they do.
import type { Logger } from 'pino';
import type { BusMessage, ConsumerOptions, HandlerOutcome } from '../infra/bus/types.ts';

/** Failed deliveries after which every further failure is logged at error level. */
const LOUD_AFTER = 5;

export function neverGiveUp(
  log: Logger,
  opts: Omit<ConsumerOptions, 'maxDeliver'>,
): ConsumerOptions {
  return {
    ...opts,
    maxDeliver: Number.POSITIVE_INFINITY,
    handler: async (msg: BusMessage): Promise<HandlerOutcome> => {
      try {
        return await opts.handler(msg);
      } catch (err) {
        const fields = { err, durable: opts.durable, subject: msg.subject, id: msg.id, deliveryCount: msg.deliveryCount };
        if (msg.deliveryCount >= LOUD_AFTER) log.error(fields, 'message keeps failing; retrying (never dropped)');
        else log.warn(fields, 'message failed; retrying');
        throw err;
      }
    },
  };
}
