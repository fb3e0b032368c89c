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

/** Query parameters that carry a secret: the recovery link's `token` (a new Master Token for 24 hours). */
const SECRET_QUERY = /([?&](?:token|secret|api_key)=)[^&#]*/gi;

/** A URL as it may be logged: the values of secret-bearing query parameters replaced. */
export function loggableUrl(url: string): string {
  return url.includes('=') ? url.replace(SECRET_QUERY, '$1[redacted]') : url;
}

/**
 * Fastify's request serializer (the fields of its `incoming request` line), with the URL made
 * loggable: redact paths cannot reach into a string, and the recovery link's GET carries its token
 * in the query. Set on the logger, whose serializers Fastify's defaults give way to.
 */
export const LOG_SERIALIZERS = {
  req(req: {
    method?: string;
    url?: string;
    headers?: Record<string, unknown>;
    host?: string;
    ip?: string;
    socket?: { remotePort?: number };
  }) {
    return {
      method: req.method,
      url: typeof req.url === 'string' ? loggableUrl(req.url) : req.url,
      version: req.headers?.['accept-version'],
      host: req.host,
      remoteAddress: req.ip,
      remotePort: req.socket?.remotePort,
    };
  },
};

/**
 * The process logger: JSON lines (what log collectors read), or pino-pretty's readable lines when
 * the output is a terminal a person watches. `destination` (tests, the CLI's stderr) is kept as given.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: LOG_SERIALIZERS,
    base: { service: 'regwatch' },
  };
  if (!destination && process.stdout.isTTY) {
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' } },
    });
  }
  return pino(options, destination);
}
