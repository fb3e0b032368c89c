import { resolve } from 'node:path';

export type Role = 'all' | 'api' | 'worker';
export type PaymentProviderName = 'dev' | 'stripe';

export const KNOWN_SOURCES = ['krs', 'bir', 'ceidg', 'vat', 'synthetic'] as const;

/** Credits per operation (DECISIONS section 3); every data route declares one of these keys. */
export const DEFAULT_PRICES = {
  'companies.search': 1,
  'companies.snapshot': 1,
  'companies.add': 1,
  'companies.events': 1,
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
  /** Unset: an embedded PostgreSQL under dataDir. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly redisUrl: string | undefined;
  readonly smtpUrl: string | undefined;
  readonly mailFrom: string;
  readonly publicBaseUrl: string;
  readonly paymentProvider: PaymentProviderName;
  readonly stripeSecretKey: string | undefined;
  readonly stripeWebhookSecret: string | undefined;
  readonly stripeApiBase: string | undefined;
  readonly role: Role;
  readonly registrySources: readonly string[];
  readonly krsApiUrl: string | undefined;
  readonly birApiUrl: string | undefined;
  readonly birApiKey: string | undefined;
  readonly ceidgApiUrl: string | undefined;
  readonly ceidgApiToken: string | undefined;
  readonly vatApiUrl: string | undefined;
  readonly logLevel: string;
  readonly prices: Readonly<Record<PriceKey, number>>;
  readonly packages: readonly CreditPackage[];
  /** Companies generated on the first start of an empty embedded database (0 turns it off). */
  readonly demoCompanies: number;
  readonly rateLimit: { readonly perMinute: number; readonly statsPerMinute: number };
  /** Take the client IP from X-Forwarded-For (only behind a proxy you control). */
  readonly trustProxy: boolean;
  /** Seconds between webhook attempts after the first (WEBHOOK_RETRY_SCHEDULE; docs/webhooks.md). */
  readonly webhookRetrySchedule: readonly number[];
  /** Deliver webhooks to loopback and private addresses (WEBHOOK_ALLOW_PRIVATE_URLS; local development). */
  readonly webhookAllowPrivateUrls: boolean;
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

/**
 * Parses the environment once into a frozen Config. Every problem is collected so that an
 * operator sees all of them at start, each naming its variable.
 */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return n;
  };
  const url = (name: string, protocols: string[]): string | undefined => {
    const raw = str(name);
    if (raw === undefined) return undefined;
    try {
      const u = new URL(raw);
      if (!protocols.includes(u.protocol)) {
        problems.push(`${name} must be a ${protocols.join(' or ')} URL (got "${u.protocol}")`);
      }
    } catch {
      problems.push(`${name} is not a valid URL`);
    }
    return raw;
  };
  const oneOf = <T extends string>(name: string, values: readonly T[], fallback: T): T => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    if (!(values as readonly string[]).includes(raw)) {
      problems.push(`${name} must be one of ${values.join(', ')} (got "${raw}")`);
      return fallback;
    }
    return raw as T;
  };
  const json = <T>(name: string, fallback: T, check: (v: unknown) => string | null): T => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    try {
      const v = JSON.parse(raw) as unknown;
      const err = check(v);
      if (err) {
        problems.push(`${name}: ${err}`);
        return fallback;
      }
      return v as T;
    } catch {
      problems.push(`${name} is not valid JSON`);
      return fallback;
    }
  };

  const port = int('PORT', 3000, 0, 65535);
  const host = str('HOST') ?? '127.0.0.1';
  const databaseUrl = url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const dataDir = resolve(str('DATA_DIR') ?? './.data');
  const redisUrl = url('REDIS_URL', ['redis:', 'rediss:']);
  const smtpUrl = url('SMTP_URL', ['smtp:', 'smtps:']);
  const mailFrom = str('MAIL_FROM') ?? 'regwatch <no-reply@regwatch.local>';
  const publicBaseUrl = (url('PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  const paymentProvider = oneOf<PaymentProviderName>('PAYMENT_PROVIDER', ['dev', 'stripe'], 'dev');
  const stripeSecretKey = str('STRIPE_SECRET_KEY');
  const stripeWebhookSecret = str('STRIPE_WEBHOOK_SECRET');
  const stripeApiBase = url('STRIPE_API_BASE', ['http:', 'https:']);
  if (paymentProvider === 'stripe') {
    if (!stripeSecretKey) problems.push('STRIPE_SECRET_KEY is required when PAYMENT_PROVIDER=stripe');
    if (!stripeWebhookSecret) problems.push('STRIPE_WEBHOOK_SECRET is required when PAYMENT_PROVIDER=stripe');
  }
  const role = oneOf<Role>('ROLE', ['all', 'api', 'worker'], 'all');

  let registrySources: string[];
  const rawSources = env.REGISTRY_SOURCES;
  if (rawSources === undefined) {
    registrySources = databaseUrl ? [] : ['synthetic'];
  } else {
    registrySources = rawSources.split(',').map((s) => s.trim()).filter(Boolean);
    for (const s of registrySources) {
      if (!(KNOWN_SOURCES as readonly string[]).includes(s)) {
        problems.push(`REGISTRY_SOURCES: unknown source "${s}" (known: ${KNOWN_SOURCES.join(', ')})`);
      }
    }
  }
  const krsApiUrl = url('KRS_API_URL', ['http:', 'https:']);
  const birApiUrl = url('BIR_API_URL', ['http:', 'https:']);
  const birApiKey = str('BIR_API_KEY');
  const ceidgApiUrl = url('CEIDG_API_URL', ['http:', 'https:']);
  const ceidgApiToken = str('CEIDG_API_TOKEN');
  const vatApiUrl = url('VAT_API_URL', ['http:', 'https:']);
  const needs: Record<string, [string, string | undefined][]> = {
    krs: [['KRS_API_URL', krsApiUrl]],
    bir: [['BIR_API_URL', birApiUrl], ['BIR_API_KEY', birApiKey]],
    ceidg: [['CEIDG_API_URL', ceidgApiUrl], ['CEIDG_API_TOKEN', ceidgApiToken]],
    vat: [['VAT_API_URL', vatApiUrl]],
  };
  for (const s of registrySources) {
    for (const [name, value] of needs[s] ?? []) {
      if (!value) problems.push(`${name} is required when REGISTRY_SOURCES includes ${s}`);
    }
  }

  const prices = {
    ...DEFAULT_PRICES,
    ...json<Partial<Record<PriceKey, number>>>('PRICES', {}, (v) => {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'must be an object of operation to credits';
      for (const [k, n] of Object.entries(v)) {
        if (!(k in DEFAULT_PRICES)) return `unknown operation "${k}" (known: ${Object.keys(DEFAULT_PRICES).join(', ')})`;
        if (!Number.isInteger(n) || (n as number) < 0) return `price of ${k} must be a non-negative integer`;
      }
      return null;
    }),
  };
  const packages = json<CreditPackage[]>('CREDIT_PACKAGES', DEFAULT_PACKAGES, (v) => {
    if (!Array.isArray(v) || v.length === 0) return 'must be a non-empty array';
    for (const p of v as CreditPackage[]) {
      if (typeof p?.slug !== 'string' || !/^[a-z0-9-]{1,64}$/.test(p.slug)) return 'each package needs a slug of a-z, 0-9 and dashes';
      if (!Number.isInteger(p.credits) || p.credits <= 0) return `package ${p.slug}: credits must be a positive integer`;
      if (!Number.isInteger(p.amount) || p.amount <= 0) return `package ${p.slug}: amount must be a positive integer (smallest currency unit)`;
      if (typeof p.currency !== 'string' || !/^[a-z]{3}$/.test(p.currency)) return `package ${p.slug}: currency must be a 3-letter code`;
    }
    return null;
  });

  const demoCompanies = int('DEMO_COMPANIES', 50_000, 0, 10_000_000);
  const rateLimit = {
    perMinute: int('RATE_LIMIT_PER_MINUTE', 180, 1, 1_000_000),
    statsPerMinute: int('RATE_LIMIT_STATS_PER_MINUTE', 10, 1, 1_000_000),
  };
  const trustProxy = oneOf('TRUST_PROXY', ['0', '1', 'true', 'false'], '0');
  let webhookRetrySchedule: number[] = [...DEFAULT_WEBHOOK_RETRY_SCHEDULE];
  const rawSchedule = str('WEBHOOK_RETRY_SCHEDULE');
  if (rawSchedule !== undefined) {
    const parts = rawSchedule.split(',').map((s) => Number(s.trim()));
    if (parts.length > 20 || parts.some((n) => !Number.isInteger(n) || n < 0 || n > 604_800)) {
      problems.push(`WEBHOOK_RETRY_SCHEDULE must be a comma list of at most 20 whole seconds from 0 to 604800 (got "${rawSchedule}")`);
    } else webhookRetrySchedule = parts;
  }
  const webhookAllowPrivateUrls = oneOf('WEBHOOK_ALLOW_PRIVATE_URLS', ['true', 'false', '1', '0'], 'false');
  const logLevel = oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info');

  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze({
    port, host, databaseUrl, dataDir, redisUrl, smtpUrl, mailFrom, publicBaseUrl, paymentProvider,
    stripeSecretKey, stripeWebhookSecret, stripeApiBase, role, registrySources: Object.freeze(registrySources),
    krsApiUrl, birApiUrl, birApiKey, ceidgApiUrl, ceidgApiToken, vatApiUrl, logLevel,
    prices: Object.freeze(prices), packages: Object.freeze(packages), demoCompanies, rateLimit: Object.freeze(rateLimit),
    trustProxy: trustProxy === '1' || trustProxy === 'true',
    webhookRetrySchedule: Object.freeze(webhookRetrySchedule),
    webhookAllowPrivateUrls: webhookAllowPrivateUrls === 'true' || webhookAllowPrivateUrls === '1',
  });
}
