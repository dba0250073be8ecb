// The bench's webhook receiver: the tests' receiver (test/helpers/webhooks.ts), plus when each
// delivery arrived on the monotonic clock (event, resource id), answering 200 or never (`hang`),
// like a merchant endpoint that is down.
import { startReceiver as startTestReceiver } from '../../test/helpers/webhooks.ts';

export interface Arrival { event: string; resourceId: string; at: number }

export interface Receiver {
  url: string;
  arrivals: Arrival[];
  onArrival?: (a: Arrival) => void;
  close(): Promise<void>;
}

export async function startReceiver(opts: { hang?: boolean } = {}): Promise<Receiver> {
  const arrivals: Arrival[] = [];
  const inner = await startTestReceiver((d) => {
    const at = performance.now();
    try {
      const body = JSON.parse(d.body) as { event: string; data: { id: string } };
      const a = { event: body.event, resourceId: body.data.id, at };
      arrivals.push(a);
      r.onArrival?.(a);
    } catch { /* not a webhook envelope: counted nowhere */ }
    return opts.hang ? { hang: true } : { status: 200 };
  });
  const r: Receiver = { url: inner.url, arrivals, close: () => inner.close() };
  return r;
}
