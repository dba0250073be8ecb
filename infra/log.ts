import { pino, type DestinationStream, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';

// Field names that may carry secrets: pino replaces them wherever they appear in a logged object.
const REDACT = [
  'api_secret', 'apiSecret', 'secret', 'signing_secret', 'signingSecret', 'otp', 'password', 'token',
  'req.headers["x-api-secret"]', 'req.headers.authorization', 'req.headers.cookie',
  '*.api_secret', '*.otp', '*.signing_secret', '*.password', '*.secret',
];

export type { Logger };

/** `LOG_FORMAT`: `auto` is pretty when the output is a terminal, JSON lines otherwise (a file, a pipe, a collector). */
export type LogFormat = 'auto' | 'json' | 'pretty';

type Output = DestinationStream & { isTTY?: boolean };

/**
 * Pretty lines for a person at a terminal, written synchronously like pino's own JSON (a line logged
 * just before the process exits is not lost in a stream pipeline). Redaction has already happened:
 * pino formats the JSON line, this only re-renders it.
 */
function prettyOutput(out: Output): DestinationStream {
  const render = prettyFactory({ colorize: out.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: false });
  return { write: (line: string) => out.write(render(line)) };
}

/**
 * A logger writing to stdout, or to `destination` (tests capture the lines): JSON lines, or pretty
 * ones when `format` says so (`auto`: when the output is a TTY).
 */
export function createLogger(level: string, destination?: DestinationStream, format: LogFormat = 'json'): Logger {
  const options = { level, redact: { paths: REDACT, censor: '[redacted]' } };
  const out: Output = destination ?? process.stdout;
  const pretty = format === 'pretty' || (format === 'auto' && out.isTTY === true);
  if (pretty) return pino(options, prettyOutput(out));
  return destination ? pino(options, destination) : pino(options);
}
