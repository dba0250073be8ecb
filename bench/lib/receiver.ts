// A local webhook receiver on 127.0.0.1: records when each delivery arrived (event, resource id),
// answers 200, or never answers (`hang`), like a merchant endpoint that is down.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Arrival { event: string; resourceId: string; at: number }

export interface Receiver {
  url: string;
  arrivals: Arrival[];
  onArrival?: (a: Arrival) => void;
  close(): Promise<void>;
}

export async function startReceiver(opts: { hang?: boolean } = {}): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const r: Receiver = {
    url: '', arrivals: [],
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event: string; data: { id: string } };
        const a = { event: body.event, resourceId: body.data.id, at };
        r.arrivals.push(a);
        r.onArrival?.(a);
      } catch { /* not a webhook envelope: counted nowhere */ }
      if (opts.hang) return;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return r;
}
