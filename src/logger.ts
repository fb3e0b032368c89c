import pino, { type Logger } from 'pino';

/**
 * The one logger type code below the composition root takes: pino's logger fits it, and so does a
 * test's quiet stand-in. Structured fields first, then the message, as pino writes them.
 */
export interface Log {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

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

/**
 * The process logger: JSON lines (what log collectors read), or pino-pretty's readable lines when
 * the output is a terminal a person watches. `destination` (tests, the CLI's stderr) is kept as given.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'regwatch' } };
  if (!destination && process.stdout.isTTY) {
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' } },
    });
  }
  return pino(options, destination);
}
