// KYC test helpers: real file bytes (a valid PNG built here, a minimal PDF) and a local HTTP file
// server on 127.0.0.1 with the cases the review must handle (404, oversized, slow, not an image,
// redirects, empty). It counts connections and requests per path.
import http from 'node:http';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import type { MerchantCreds, TestApp } from './app.ts';
import { waitUntil } from './wait.ts';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A valid 1x1 RGB PNG (signature, IHDR, zlib-compressed IDAT, IEND, each chunk with its CRC). */
export function pngBytes(rgb: [number, number, number] = [0, 128, 255]): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0); // width
  ihdr.writeUInt32BE(1, 4); // height
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  ihdr[10] = 0; // compression
  ihdr[11] = 0; // filter
  ihdr[12] = 0; // interlace
  const scanline = Buffer.from([0, ...rgb]); // filter type 0, then one pixel
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(scanline)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A minimal one-page PDF. */
export function pdfBytes(): Buffer {
  return Buffer.from(
    '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n' +
    '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 10 10]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
    'latin1',
  );
}

export const MIB = 1024 * 1024;

export interface FileServer {
  url: string;
  port: number;
  connections: number;
  hits: Map<string, number>;
  /** Oversized downloads the server could not finish (the client cut them). */
  hugeCut: number;
  hugeFinished: number;
  close(): Promise<void>;
}

/**
 * Paths: /id.png, /doc.pdf, /missing (404), /huge (32 MiB streamed, no Content-Length),
 * /huge-declared (Content-Length 11 MiB), /slow (headers and 8 bytes, then silence), /delayed (the
 * PNG after 800 ms), /photo.txt (the PNG served as text/plain), /text,
 * /empty, /redirect/<n> (n hops, then the PNG), /to/<url-encoded absolute URL> (302 there).
 */
export async function startFileServer(host = '127.0.0.1'): Promise<FileServer> {
  const png = pngBytes();
  const pdf = pdfBytes();
  const block = Buffer.alloc(64 * 1024, 0x41);
  const state = { connections: 0, hits: new Map<string, number>(), hugeCut: 0, hugeFinished: 0 };
  const stalled = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    state.hits.set(path, (state.hits.get(path) ?? 0) + 1);
    const send = (status: number, type: string, body: Buffer | string) => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (path === '/id.png') return send(200, 'image/png', png);
    // A file served with a lying Content-Type: the type is judged from the bytes.
    if (path === '/photo.txt') return send(200, 'text/plain', png);
    if (path === '/doc.pdf') return send(200, 'application/pdf', pdf);
    if (path === '/text') return send(200, 'image/png', 'hello, I am not an image at all\n');
    if (path === '/empty') return send(200, 'image/png', '');
    if (path === '/huge-declared') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(11 * MIB) });
      res.write(png);
      return; // never finishes: the client must refuse on the header alone
    }
    if (path === '/huge') {
      res.writeHead(200, { 'content-type': 'image/png' }); // chunked: the size is only known while streaming
      let sent = 0;
      const total = 32 * MIB;
      let finished = false;
      res.on('close', () => {
        if (!finished) state.hugeCut++;
      });
      const pump = () => {
        while (sent < total) {
          sent += block.length;
          const more = res.write(sent === block.length ? Buffer.concat([png, block.subarray(png.length)]) : block);
          if (!more) return void res.once('drain', pump);
        }
        finished = true;
        state.hugeFinished++;
        res.end();
      };
      pump();
      return;
    }
    if (path === '/delayed') {
      const timer = setTimeout(() => send(200, 'image/png', png), 800);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    if (path === '/slow') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write(png.subarray(0, 8));
      stalled.add(res);
      res.on('close', () => stalled.delete(res));
      return;
    }
    const hops = /^\/redirect\/([0-9]+)$/.exec(path);
    if (hops) {
      const n = Number(hops[1]);
      res.writeHead(302, { location: n <= 1 ? '/id.png' : `/redirect/${n - 1}` });
      return res.end();
    }
    if (path.startsWith('/to/')) {
      res.writeHead(302, { location: decodeURIComponent(path.slice(4)) });
      return res.end();
    }
    return send(404, 'text/plain', 'not found');
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    port,
    get connections() { return state.connections; },
    get hits() { return state.hits; },
    get hugeCut() { return state.hugeCut; },
    get hugeFinished() { return state.hugeFinished; },
    close: () => new Promise<void>((r) => {
      for (const res of stalled) res.destroy();
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

export const passport = (files: Record<string, string>, over: Record<string, unknown> = {}) => ({
  document_type: 'passport', document_number: 'A1234567', issue_country_code: 'SN',
  issue_date: '2020-01-15', expiry_date: '2035-01-14', ...files, ...over,
});

export async function newCustomer(h: TestApp, m: MerchantCreds): Promise<string> {
  const c = await h.as(m, 'POST', '/customers', { first_name: 'Awa', last_name: 'Diop', country_code: 'SN' }, { idem: true });
  if (c.status !== 201) throw new Error(`customer create failed: ${c.status} ${c.text}`);
  return c.body.id as string;
}

/** Waits until `probe` answers something truthy (test/helpers/wait.ts: the bound is a safety net only). */
export const until = waitUntil;

/** Waits for the review to end (verified or rejected) and answers the KYC record. */
export function reviewed(h: TestApp, m: MerchantCreds, customerId: string): Promise<any> {
  return until(`kyc of ${customerId} reviewed`, async () => {
    const r = await h.as(m, 'GET', `/customers/${customerId}/kyc`);
    return r.body?.kyc_status === 'verified' || r.body?.kyc_status === 'rejected' ? r.body : undefined;
  });
}
