import pino, { type Logger } from 'pino';

/** Paths never to be written to a log: credentials and one-time secrets. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'token',
  'plaintext',
  'master_token',
  '*.plaintext',
  '*.master_token',
  '*.token',
  'data.plaintext',
  'data.new_token.plaintext',
  'password',
  '*.password',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'regwatch' } }, destination);
}
