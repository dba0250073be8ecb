import { pino, type DestinationStream, type Logger } from 'pino';

// Field names that may carry secrets: pino replaces them wherever they appear in a logged object.
const REDACT = [
  'api_secret', 'apiSecret', 'secret', 'signing_secret', 'signingSecret', 'otp', 'password', 'token',
  'req.headers["x-api-secret"]', 'req.headers.authorization', 'req.headers.cookie',
  '*.api_secret', '*.otp', '*.signing_secret', '*.password', '*.secret',
];

export type { Logger };

/** A logger writing JSON lines to stdout, or to `destination` (tests capture the lines). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
