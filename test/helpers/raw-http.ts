// One HTTP/1.1 request written byte for byte on a socket: for headers no HTTP client would send
// (control characters, non-ASCII bytes, oversized or repeated headers). Answers status and body.
import net from 'node:net';

export interface RawAnswer { status: number; headers: Record<string, string>; body: string }

export function rawRequest(url: string, head: string, body: Buffer | string = '', opts: { noHost?: boolean; timeoutMs?: number } = {}): Promise<RawAnswer> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => { socket.destroy(); reject(new Error('raw request timed out')); }, timeoutMs);
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      // An accepted stream (Server-Sent Events) never ends by itself: its head is the answer.
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split >= 0 && /^content-type:\s*text\/event-stream/im.test(text.slice(0, split))) socket.destroy();
    });
    socket.on('error', (err) => { clearTimeout(timer); reject(err); });
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const headLines = (split < 0 ? text : text.slice(0, split)).split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(headLines[0] ?? '')?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const l of headLines.slice(1)) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      let rest = Buffer.from(split < 0 ? '' : text.slice(split + 4), 'latin1');
      if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
        const parts: Buffer[] = [];
        for (;;) {
          const eol = rest.indexOf('\r\n');
          const size = parseInt(rest.subarray(0, eol).toString(), 16);
          if (!size) break;
          parts.push(rest.subarray(eol + 2, eol + 2 + size));
          rest = rest.subarray(eol + 2 + size + 2);
        }
        rest = Buffer.concat(parts);
      }
      resolve({ status, headers, body: rest.toString('utf8') });
    });
    const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    socket.write(Buffer.concat([Buffer.from(`${head}\r\n${opts.noHost ? '' : `Host: ${hostname}\r\n`}Connection: close\r\nContent-Length: ${payload.length}\r\n\r\n`, 'latin1'), payload]));
  });
}
