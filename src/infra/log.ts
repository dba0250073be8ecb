import { pino, type Logger } from 'pino';

// Field names that may carry secrets: pino replaces them wherever they appear in a logged object.
const REDACT = [
  'api_secret', 'apiSecret', 'secret', 'signing_secret', 'signingSecret', 'otp', 'password', 'token',
  'req.headers["x-api-secret"]', 'req.headers.authorization', 'req.headers.cookie',
  '*.api_secret', '*.otp', '*.signing_secret', '*.password', '*.secret',
];

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' } });
}
