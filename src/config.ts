import addressparser from 'nodemailer/lib/addressparser/index.js';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

export type Role = 'all' | 'api' | 'worker';
export type PaymentProviderName = 'dev' | 'stripe';

export const KNOWN_SOURCES = ['krs', 'bir', 'ceidg', 'vat', 'synthetic'] as const;

/**
 * The modules with background jobs (tasks and crontab lines), by AppModule name: what WORKER_JOBS
 * selects from. src/composition.ts refuses a module with jobs that is not listed here.
 */
export const JOB_MODULES = ['accounts', 'wallet', 'watchlist', 'mail', 'registry', 'webhooks'] as const;
export type JobModuleName = (typeof JOB_MODULES)[number];

/** Credits per operation (docs/credits.md); every data route declares one of these keys. */
export const DEFAULT_PRICES = {
  'companies.search': 1,
  'companies.snapshot': 1,
  'companies.add': 1,
  'companies.events': 1,
  'companies.match': 1,
  'watchlist.events': 1,
  'webhooks.delivery': 0,
} as const;
export type PriceKey = keyof typeof DEFAULT_PRICES;

export interface CreditPackage {
  slug: string;
  credits: number;
  /** Price in the smallest currency unit (grosze). */
  amount: number;
  currency: string;
}

export const DEFAULT_PACKAGES: CreditPackage[] = [
  { slug: 'credits-1000', credits: 1000, amount: 4900, currency: 'pln' },
  { slug: 'credits-5000', credits: 5000, amount: 19900, currency: 'pln' },
  { slug: 'credits-25000', credits: 25000, amount: 79900, currency: 'pln' },
];

export interface Config {
  readonly port: number;
  readonly host: string;
  /**
   * Set: /metrics and /health are served on this port of HOST by every role (a worker opens no
   * other port), and /metrics is no longer on the API's port.
   */
  readonly metricsPort: number | null;
  /** Unset: an embedded PostgreSQL under dataDir. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly redisUrl: string | undefined;
  readonly smtpUrl: string | undefined;
  readonly mailFrom: string;
  readonly publicBaseUrl: string;
  /** PUBLIC_BASE_URL was given (not the default built from HOST and PORT). */
  readonly publicBaseUrlSet: boolean;
  readonly paymentProvider: PaymentProviderName;
  readonly stripeSecretKey: string | undefined;
  readonly stripeWebhookSecret: string | undefined;
  readonly stripeApiBase: string | undefined;
  readonly role: Role;
  /** The job modules whose tasks and crontab this process's worker runs (WORKER_JOBS; default all). */
  readonly workerJobs: readonly JobModuleName[];
  /** Put the worker process and its local PostgreSQL backends under SCHED_IDLE (WORKER_IDLE_PRIORITY; ROLE=worker only). */
  readonly workerIdlePriority: boolean;
  readonly registrySources: readonly string[];
  readonly krsApiUrl: string | undefined;
  readonly birApiUrl: string | undefined;
  readonly birApiKey: string | undefined;
  readonly ceidgApiUrl: string | undefined;
  readonly ceidgApiToken: string | undefined;
  readonly vatApiUrl: string | undefined;
  /** How many days before the scheduled day the scheduler looks for missed runs to catch up. */
  readonly registryCatchUpDays: number;
  readonly logLevel: string;
  readonly prices: Readonly<Record<PriceKey, number>>;
  readonly packages: readonly CreditPackage[];
  /** Companies generated on the first start of an empty embedded database (0 turns it off). */
  readonly demoCompanies: number;
  readonly rateLimit: { readonly perMinute: number; readonly statsPerMinute: number };
  /**
   * How many proxies in front of the service to trust (TRUST_PROXY; 0: none): the client IP is
   * the address the outermost trusted one saw, the last N entries of X-Forwarded-For read from
   * the right, so an address a client wrote into the header itself is never taken.
   */
  readonly trustProxy: number;
  /** Tokens an API process keeps in memory for priced requests (TOKEN_CACHE_SIZE; 0 turns the cache off). */
  readonly tokenCacheSize: number;
  /** Seconds between webhook attempts after the first (WEBHOOK_RETRY_SCHEDULE; docs/webhooks.md). */
  readonly webhookRetrySchedule: readonly number[];
  /** Deliver webhooks to loopback and private addresses (WEBHOOK_ALLOW_PRIVATE_URLS; local development). */
  readonly webhookAllowPrivateUrls: boolean;
  /** How a worker process finds the jobs of worker processes that died (src/jobs/recovery.ts). */
  readonly jobRecovery: { readonly sweepIntervalMs: number; readonly graceMs: number };
  /** Node.js's own NODE_OPTIONS, read only to tell whether an API process runs with its node options (src/lib/collector.ts). */
  readonly nodeOptions: string;
}

/** 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h after the first attempt; then the message fails. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000] as const;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const Url = (protocols: readonly string[]) =>
  Type.String({ pattern: `^(${protocols.map((p) => p.replace(':', '')).join('|')}):`, description: `a ${protocols.join(' or ')} URL` });
const Int = (min: number, max: number) => Type.String({ pattern: '^-?[0-9]+$', description: `an integer from ${min} to ${max}`, min, max });
const OneOf = (values: readonly string[]) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { description: `one of ${values.join(', ')}` },
  );

/**
 * Every variable the service reads, as TypeBox schemas over the raw strings: one place that lists
 * them (docs/configuration.md explains each), checked all at once so an operator sees every problem.
 */
const EnvSchema = Type.Object({
  PORT: Type.Optional(Int(0, 65535)),
  METRICS_PORT: Type.Optional(Int(1, 65535)),
  HOST: Type.Optional(Type.String()),
  DATABASE_URL: Type.Optional(Url(['postgres:', 'postgresql:'])),
  DATA_DIR: Type.Optional(Type.String()),
  REDIS_URL: Type.Optional(Url(['redis:', 'rediss:'])),
  SMTP_URL: Type.Optional(Url(['smtp:', 'smtps:'])),
  MAIL_FROM: Type.Optional(Type.String()),
  PUBLIC_BASE_URL: Type.Optional(Url(['http:', 'https:'])),
  PAYMENT_PROVIDER: Type.Optional(OneOf(['dev', 'stripe'])),
  STRIPE_SECRET_KEY: Type.Optional(Type.String()),
  STRIPE_WEBHOOK_SECRET: Type.Optional(Type.String()),
  STRIPE_API_BASE: Type.Optional(Url(['http:', 'https:'])),
  ROLE: Type.Optional(OneOf(['all', 'api', 'worker'])),
  WORKER_JOBS: Type.Optional(Type.String({ description: 'a comma list of job modules' })),
  WORKER_IDLE_PRIORITY: Type.Optional(OneOf(['true', 'false', '1', '0'])),
  KRS_API_URL: Type.Optional(Url(['http:', 'https:'])),
  BIR_API_URL: Type.Optional(Url(['http:', 'https:'])),
  BIR_API_KEY: Type.Optional(Type.String()),
  CEIDG_API_URL: Type.Optional(Url(['http:', 'https:'])),
  CEIDG_API_TOKEN: Type.Optional(Type.String()),
  VAT_API_URL: Type.Optional(Url(['http:', 'https:'])),
  REGISTRY_CATCH_UP_DAYS: Type.Optional(Int(0, 366)),
  PRICES: Type.Optional(Type.String({ description: 'a JSON object of operation to credits' })),
  CREDIT_PACKAGES: Type.Optional(Type.String({ description: 'a JSON array of packages' })),
  DEMO_COMPANIES: Type.Optional(Int(0, 10_000_000)),
  RATE_LIMIT_PER_MINUTE: Type.Optional(Int(1, 1_000_000)),
  RATE_LIMIT_STATS_PER_MINUTE: Type.Optional(Int(1, 1_000_000)),
  TRUST_PROXY: Type.Optional(
    Type.String({ pattern: '^(true|false|[0-9]|10)$', description: 'true (one proxy), false, or the number of proxies in front, 0 to 10' }),
  ),
  TOKEN_CACHE_SIZE: Type.Optional(Int(0, 1_000_000)),
  LOG_LEVEL: Type.Optional(OneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])),
  WEBHOOK_RETRY_SCHEDULE: Type.Optional(Type.String({ description: 'a comma list of seconds' })),
  WEBHOOK_ALLOW_PRIVATE_URLS: Type.Optional(OneOf(['true', 'false', '1', '0'])),
  JOB_RECOVERY_SWEEP_SECONDS: Type.Optional(Int(1, 3600)),
  JOB_RECOVERY_GRACE_SECONDS: Type.Optional(Int(1, 86_400)),
});
type RawEnv = Static<typeof EnvSchema>;

const PricesSchema = Type.Record(Type.String(), Type.Integer({ minimum: 0 }));
const PackagesSchema = Type.Array(
  Type.Object({
    slug: Type.String({ pattern: '^[a-z0-9-]{1,64}$' }),
    credits: Type.Integer({ minimum: 1 }),
    amount: Type.Integer({ minimum: 1, description: 'the price in the smallest currency unit' }),
    currency: Type.String({ pattern: '^[a-z]{3}$' }),
  }),
  { minItems: 1 },
);

/**
 * The refused value as the message quotes it, with any `user:password@` masked: a mistyped
 * DATABASE_URL or SMTP_URL would otherwise print its password where log collectors read it.
 */
function quoted(raw: unknown): string {
  return JSON.stringify(typeof raw === 'string' ? raw.replace(/([^\s/:@]*):[^\s@/]*@/g, '$1:***@') : raw);
}

function describe(schema: TSchema, raw: unknown): string {
  return `must be ${String(schema.description ?? 'valid')} (got ${quoted(raw)})`;
}

/** Problems with a JSON-valued variable, checked against its schema. */
function parseJson<T extends TSchema>(name: string, raw: string | undefined, schema: T, problems: string[]): Static<T> | undefined {
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    problems.push(`${name} is not valid JSON`);
    return undefined;
  }
  const first = Value.Errors(schema, value).First();
  if (!first) return value as Static<T>;
  problems.push(`${name}: ${first.path ? `${first.path.slice(1).replaceAll('/', '.')} ` : ''}${first.message.toLowerCase()}`);
  return undefined;
}

/**
 * WORKER_JOBS: either all plain names (only these modules) or all `-`-prefixed (every module but
 * these); unset, every module. Problems are added to `problems`; the selection is in JOB_MODULES order.
 */
function parseWorkerJobs(raw: string | undefined, problems: string[]): JobModuleName[] {
  if (raw === undefined) return [...JOB_MODULES];
  const items = raw.split(',').map((x) => x.trim());
  const known = `known: ${JOB_MODULES.join(', ')}`;
  if (items.some((x) => x === '' || x === '-')) {
    problems.push(`WORKER_JOBS has an empty item (got "${raw}"; ${known})`);
    return [...JOB_MODULES];
  }
  const excluding = items.filter((x) => x.startsWith('-')).length;
  if (excluding > 0 && excluding < items.length) {
    problems.push(`WORKER_JOBS mixes names and -names (got "${raw}"): list the modules to run, or -modules to leave out`);
    return [...JOB_MODULES];
  }
  const names = items.map((x) => x.replace(/^-/, ''));
  const unknown = names.filter((x) => !(JOB_MODULES as readonly string[]).includes(x));
  for (const x of unknown) problems.push(`WORKER_JOBS: unknown job module "${x}" (${known})`);
  if (unknown.length > 0) return [...JOB_MODULES];
  const selected = JOB_MODULES.filter((m) => (excluding > 0 ? !names.includes(m) : names.includes(m)));
  if (selected.length === 0) problems.push(`WORKER_JOBS leaves out every job module (got "${raw}")`);
  return selected;
}

/** A DNS name (RFC 1123 labels): `localhost`, `api.internal`, `0.0.0.0` is an IP. */
const HOST_NAME = /^(?=.{1,253}\.?$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

/**
 * Parses the environment once into a frozen Config. Every problem is collected so that an
 * operator sees all of them at start, each naming its variable.
 */
/** PUBLIC_BASE_URL's default: `http://HOST:PORT`, an IPv6 host in brackets. */
export function defaultPublicBaseUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  // An empty or blank variable counts as unset; values are trimmed.
  const given: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const v = env[key]?.trim();
    if (v) given[key] = v;
  }
  for (const error of Value.Errors(EnvSchema, given)) {
    const name = error.path.slice(1);
    problems.push(`${name} ${describe(error.schema, error.value)}`);
  }
  const ints = (Object.entries(EnvSchema.properties) as [string, TSchema & { min?: number; max?: number }][]).filter(
    ([, s]) => s.min !== undefined,
  );
  for (const [name, schema] of ints) {
    const raw = given[name];
    if (raw === undefined || !/^-?[0-9]+$/.test(raw)) continue;
    const n = Number(raw);
    if (n < schema.min! || n > schema.max!) problems.push(`${name} ${describe(schema, raw)}`);
  }
  for (const name of [
    'DATABASE_URL',
    'REDIS_URL',
    'SMTP_URL',
    'PUBLIC_BASE_URL',
    'STRIPE_API_BASE',
    'KRS_API_URL',
    'BIR_API_URL',
    'CEIDG_API_URL',
    'VAT_API_URL',
  ]) {
    if (given[name] !== undefined && !URL.canParse(given[name])) problems.push(`${name} is not a valid URL`);
  }
  // smtp: is not a scheme the URL parser requires a host for (`smtp://` parses); mail needs one.
  if (given.SMTP_URL !== undefined && URL.canParse(given.SMTP_URL) && new URL(given.SMTP_URL).hostname === '')
    problems.push('SMTP_URL names no host (smtp://[user:pass@]host:port)');
  const e = given as RawEnv;
  const int = (raw: string | undefined, fallback: number) => (raw !== undefined && /^-?[0-9]+$/.test(raw) ? Number(raw) : fallback);

  const port = int(e.PORT, 3000);
  const metricsPort = e.METRICS_PORT === undefined ? null : int(e.METRICS_PORT, 0);
  if (metricsPort !== null && metricsPort === port && e.ROLE !== 'worker')
    problems.push(`METRICS_PORT must differ from PORT (${port}), which the API listens on`);
  const host = e.HOST ?? '127.0.0.1';
  // Checked here, with the rest: a bad one would otherwise fail at listen, after the migrations.
  if (isIP(host) === 0 && !HOST_NAME.test(host)) problems.push(`HOST must be an IP address or a host name (got ${quoted(host)})`);
  const databaseUrl = e.DATABASE_URL;
  const paymentProvider = (e.PAYMENT_PROVIDER ?? 'dev') as PaymentProviderName;
  if (paymentProvider === 'stripe') {
    if (!e.STRIPE_SECRET_KEY) problems.push('STRIPE_SECRET_KEY is required when PAYMENT_PROVIDER=stripe');
    if (!e.STRIPE_WEBHOOK_SECRET) problems.push('STRIPE_WEBHOOK_SECRET is required when PAYMENT_PROVIDER=stripe');
  }

  // Unset: synthetic on the embedded database, none on a server's; set but empty: none.
  const rawSources = env.REGISTRY_SOURCES;
  const registrySources =
    rawSources === undefined
      ? databaseUrl
        ? []
        : ['synthetic']
      : [
          ...new Set(
            rawSources
              .split(',')
              .map((x) => x.trim())
              .filter(Boolean),
          ),
        ];
  for (const source of registrySources) {
    if (!(KNOWN_SOURCES as readonly string[]).includes(source))
      problems.push(`REGISTRY_SOURCES: unknown source "${source}" (known: ${KNOWN_SOURCES.join(', ')})`);
  }
  const needs: Record<string, (keyof RawEnv)[]> = {
    krs: ['KRS_API_URL'],
    bir: ['BIR_API_URL', 'BIR_API_KEY'],
    ceidg: ['CEIDG_API_URL', 'CEIDG_API_TOKEN'],
    vat: ['VAT_API_URL'],
  };
  for (const source of registrySources) {
    for (const name of needs[source] ?? []) if (!e[name]) problems.push(`${name} is required when REGISTRY_SOURCES includes ${source}`);
  }

  const priceOverrides = parseJson('PRICES', e.PRICES, PricesSchema, problems) ?? {};
  for (const key of Object.keys(priceOverrides)) {
    if (!(key in DEFAULT_PRICES)) problems.push(`PRICES: unknown operation "${key}" (known: ${Object.keys(DEFAULT_PRICES).join(', ')})`);
  }
  const packages = parseJson('CREDIT_PACKAGES', e.CREDIT_PACKAGES, PackagesSchema, problems) ?? DEFAULT_PACKAGES;
  const rawSchedule = e.WEBHOOK_RETRY_SCHEDULE;
  let webhookRetrySchedule: number[] = [...DEFAULT_WEBHOOK_RETRY_SCHEDULE];
  if (rawSchedule !== undefined) {
    const parts = rawSchedule.split(',').map((x) => Number(x.trim()));
    if (parts.length > 20 || parts.some((n) => !Number.isInteger(n) || n < 0 || n > 604_800)) {
      problems.push(`WEBHOOK_RETRY_SCHEDULE must be a comma list of at most 20 whole seconds from 0 to 604800 (got "${rawSchedule}")`);
    } else webhookRetrySchedule = parts;
  }

  if (e.MAIL_FROM !== undefined) {
    // One address, bare or with a display name, as nodemailer reads it: a value it cannot read
    // became mail with no From and an empty envelope sender, which relays refuse.
    const parsed = addressparser(e.MAIL_FROM, { flatten: true });
    if (parsed.length !== 1 || !/^[^\s@]+@[^\s@]+$/.test(parsed[0]!.address))
      problems.push(
        `MAIL_FROM must be one e-mail address, optionally with a name: "regwatch <no-reply@example.com>" (got "${e.MAIL_FROM}")`,
      );
  }

  const role = (e.ROLE ?? 'all') as Role;
  const workerJobs = parseWorkerJobs(e.WORKER_JOBS, problems);
  if (e.WORKER_JOBS !== undefined && role === 'api') problems.push('WORKER_JOBS is set but ROLE=api runs no worker');
  const workerIdlePriority = e.WORKER_IDLE_PRIORITY === 'true' || e.WORKER_IDLE_PRIORITY === '1';
  if (workerIdlePriority && role !== 'worker')
    problems.push(
      `WORKER_IDLE_PRIORITY=true needs ROLE=worker (got ROLE=${role}): idle priority would starve ${role === 'api' ? 'the API' : 'the API and the daily run in this process'}`,
    );

  if (problems.length > 0) throw new ConfigError(problems);
  const trustProxy = e.TRUST_PROXY ?? '0';
  return Object.freeze({
    port,
    host,
    metricsPort,
    databaseUrl,
    dataDir: resolve(e.DATA_DIR ?? './.data'),
    redisUrl: e.REDIS_URL,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM ?? 'regwatch <no-reply@regwatch.local>',
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? defaultPublicBaseUrl(host, port)).replace(/\/+$/, ''),
    publicBaseUrlSet: e.PUBLIC_BASE_URL !== undefined,
    paymentProvider,
    stripeSecretKey: e.STRIPE_SECRET_KEY,
    stripeWebhookSecret: e.STRIPE_WEBHOOK_SECRET,
    stripeApiBase: e.STRIPE_API_BASE,
    role,
    workerJobs: Object.freeze(workerJobs),
    workerIdlePriority,
    registrySources: Object.freeze(registrySources),
    krsApiUrl: e.KRS_API_URL,
    birApiUrl: e.BIR_API_URL,
    birApiKey: e.BIR_API_KEY,
    ceidgApiUrl: e.CEIDG_API_URL,
    ceidgApiToken: e.CEIDG_API_TOKEN,
    vatApiUrl: e.VAT_API_URL,
    registryCatchUpDays: int(e.REGISTRY_CATCH_UP_DAYS, 30),
    logLevel: e.LOG_LEVEL ?? 'info',
    prices: Object.freeze({ ...DEFAULT_PRICES, ...priceOverrides } as Record<PriceKey, number>),
    packages: Object.freeze(packages),
    demoCompanies: int(e.DEMO_COMPANIES, 50_000),
    rateLimit: Object.freeze({ perMinute: int(e.RATE_LIMIT_PER_MINUTE, 180), statsPerMinute: int(e.RATE_LIMIT_STATS_PER_MINUTE, 10) }),
    trustProxy: trustProxy === 'true' ? 1 : trustProxy === 'false' ? 0 : Number(trustProxy),
    tokenCacheSize: int(e.TOKEN_CACHE_SIZE, 10_000),
    webhookRetrySchedule: Object.freeze(webhookRetrySchedule),
    webhookAllowPrivateUrls: e.WEBHOOK_ALLOW_PRIVATE_URLS === 'true' || e.WEBHOOK_ALLOW_PRIVATE_URLS === '1',
    jobRecovery: Object.freeze({
      sweepIntervalMs: int(e.JOB_RECOVERY_SWEEP_SECONDS, 30) * 1000,
      graceMs: int(e.JOB_RECOVERY_GRACE_SECONDS, 60) * 1000,
    }),
    nodeOptions: env.NODE_OPTIONS ?? '',
  });
}
