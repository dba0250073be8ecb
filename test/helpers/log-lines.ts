// The service's log lines as written, for the tests that search them (no secret in any line).
import { Writable } from 'node:stream';

/** A stream to give the logger and the lines it received (pino writes whole lines; a chunk may still hold several). */
export function logLines(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  let partial = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop()!;
      lines.push(...parts.filter((l) => l.length > 0));
      done();
    },
  });
  return { stream, lines };
}
