import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, DEFAULT_PACKAGES, DEFAULT_PRICES, JOB_MODULES, loadConfig } from './config.ts';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
};

test('defaults: embedded database, synthetic source, port 3000, dev payments', () => {
  const c = loadConfig({});
  assert.equal(c.port, 3000);
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.databaseUrl, undefined);
  assert.deepEqual(c.registrySources, ['synthetic']);
  assert.equal(c.publicBaseUrl, 'http://127.0.0.1:3000');
  assert.equal(c.paymentProvider, 'dev');
  assert.equal(c.role, 'all');
  assert.equal(c.logLevel, 'info');
  assert.deepEqual(c.prices, DEFAULT_PRICES);
  assert.deepEqual(c.packages, DEFAULT_PACKAGES);
  assert.deepEqual(c.rateLimit, { perMinute: 180, statsPerMinute: 10 });
  assert.equal(c.trustProxy, 0);
  assert.equal(c.tokenCacheSize, 10_000);
  assert.ok(Object.isFrozen(c));
});

test('TOKEN_CACHE_SIZE: 0 turns the token cache off; a negative or huge size is refused', () => {
  assert.equal(loadConfig({ TOKEN_CACHE_SIZE: '0' }).tokenCacheSize, 0);
  assert.equal(loadConfig({ TOKEN_CACHE_SIZE: '500' }).tokenCacheSize, 500);
  for (const bad of ['-1', '2000000', 'lots'])
    assert.ok(
      problemsOf({ TOKEN_CACHE_SIZE: bad }).some((p) => p.startsWith('TOKEN_CACHE_SIZE')),
      bad,
    );
});

test('values are trimmed, blank counts as unset, REGISTRY_SOURCES set but empty means none', () => {
  const c = loadConfig({
    PORT: ' 8080 ',
    HOST: '  ',
    DATABASE_URL: 'postgres://u@h/db',
    REGISTRY_SOURCES: '',
    PUBLIC_BASE_URL: 'https://api.example.com/',
    TRUST_PROXY: 'true',
    PRICES: '{"companies.search":3}',
  });
  assert.equal(c.port, 8080);
  assert.equal(c.host, '127.0.0.1');
  assert.deepEqual(c.registrySources, []);
  assert.equal(c.publicBaseUrl, 'https://api.example.com');
  assert.equal(c.trustProxy, 1);
  assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
  assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, 0);
  assert.ok(problemsOf({ TRUST_PROXY: 'yes' }).some((p) => p.startsWith('TRUST_PROXY')));
  assert.equal(c.prices['companies.search'], 3);
  assert.deepEqual(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).registrySources, [], 'no source by default on a server database');
  assert.deepEqual(
    loadConfig({ REGISTRY_SOURCES: 'synthetic, synthetic,,' }).registrySources,
    ['synthetic'],
    'a source named twice runs once',
  );
});

test('every problem is listed at once, each naming its variable', () => {
  const problems = problemsOf({
    PORT: '70000',
    ROLE: 'boss',
    DATABASE_URL: 'mysql://x',
    PAYMENT_PROVIDER: 'stripe',
    REGISTRY_SOURCES: 'krs,ftp',
    PRICES: '{"companies.nope":1}',
    CREDIT_PACKAGES: '[]',
    RATE_LIMIT_PER_MINUTE: 'many',
    SMTP_URL: 'smtp://bad host',
  });
  for (const name of [
    'PORT',
    'ROLE',
    'DATABASE_URL',
    'STRIPE_SECRET_KEY',
    'STRIPE_WEBHOOK_SECRET',
    'KRS_API_URL',
    'REGISTRY_SOURCES: unknown source "ftp"',
    'PRICES: unknown operation',
    'CREDIT_PACKAGES',
    'RATE_LIMIT_PER_MINUTE',
    'SMTP_URL',
  ]) {
    assert.ok(
      problems.some((p) => p.startsWith(name)),
      `${name} in ${JSON.stringify(problems, null, 1)}`,
    );
  }
  assert.match(
    problems.find((p) => p.startsWith('PORT'))!,
    /integer from 0 to 65535 \(got "70000"\)/,
  );
  assert.match(
    problems.find((p) => p.startsWith('ROLE'))!,
    /one of all, api, worker/,
  );
});

test('SMTP_URL must name a host', () => {
  assert.deepEqual(problemsOf({ SMTP_URL: 'smtp://' }), ['SMTP_URL names no host (smtp://[user:pass@]host:port)']);
  assert.deepEqual(problemsOf({ SMTP_URL: 'smtp://user:pw@mail.example:587' }), []);
});

test('MAIL_FROM must be one address, bare or with a name', () => {
  for (const ok of ['regwatch <no-reply@regwatch.example>', 'alerts@regwatch.example', '"Regwatch, alerts" <a@b.example>'])
    assert.deepEqual(problemsOf({ MAIL_FROM: ok }), [], ok);
  for (const bad of ['garbage', 'x <y>', 'a@b.example, c@d.example'])
    assert.deepEqual(problemsOf({ MAIL_FROM: bad }), [
      `MAIL_FROM must be one e-mail address, optionally with a name: "regwatch <no-reply@example.com>" (got "${bad}")`,
    ]);
  assert.equal(loadConfig({}).mailFrom, 'regwatch <no-reply@regwatch.local>');
});

test('JSON variables are checked against their schemas', () => {
  assert.match(problemsOf({ PRICES: 'nope' })[0]!, /^PRICES is not valid JSON/);
  assert.match(problemsOf({ PRICES: '{"companies.search":-1}' })[0]!, /^PRICES: /);
  assert.match(
    problemsOf({ CREDIT_PACKAGES: '[{"slug":"Bad Slug","credits":1,"amount":1,"currency":"pln"}]' })[0]!,
    /^CREDIT_PACKAGES: 0\.slug/,
  );
  const c = loadConfig({ CREDIT_PACKAGES: '[{"slug":"x","credits":10,"amount":100,"currency":"eur"}]' });
  assert.deepEqual(c.packages, [{ slug: 'x', credits: 10, amount: 100, currency: 'eur' }]);
});

test('WORKER_JOBS: default every job module; plain names run only those, -names all but those', () => {
  assert.deepEqual(loadConfig({}).workerJobs, JOB_MODULES);
  assert.deepEqual(loadConfig({ ROLE: 'worker', WORKER_JOBS: '  ' }).workerJobs, JOB_MODULES, 'blank counts as unset');
  assert.deepEqual(loadConfig({ ROLE: 'worker', WORKER_JOBS: 'webhooks' }).workerJobs, ['webhooks']);
  assert.deepEqual(loadConfig({ ROLE: 'worker', WORKER_JOBS: ' webhooks , mail,webhooks' }).workerJobs, ['mail', 'webhooks']);
  assert.deepEqual(loadConfig({ ROLE: 'worker', WORKER_JOBS: '-webhooks' }).workerJobs, [
    'accounts',
    'wallet',
    'watchlist',
    'mail',
    'registry',
  ]);
  assert.deepEqual(loadConfig({ ROLE: 'worker', WORKER_JOBS: '-webhooks, -registry' }).workerJobs, [
    'accounts',
    'wallet',
    'watchlist',
    'mail',
  ]);
  assert.deepEqual(loadConfig({ WORKER_JOBS: 'registry' }).workerJobs, ['registry'], 'ROLE=all may narrow its worker too');
  assert.ok(Object.isFrozen(loadConfig({ WORKER_JOBS: 'registry' }).workerJobs));
});

test('WORKER_JOBS: unknown names, a mix of names and -names, empty items, none left, ROLE=api are refused', () => {
  const one = (env: Record<string, string>) => {
    const problems = problemsOf(env);
    assert.equal(problems.length, 1, JSON.stringify(problems));
    return problems[0]!;
  };
  assert.equal(
    one({ ROLE: 'worker', WORKER_JOBS: 'webhooks,hooks' }),
    'WORKER_JOBS: unknown job module "hooks" (known: accounts, wallet, watchlist, mail, registry, webhooks)',
  );
  assert.match(one({ ROLE: 'worker', WORKER_JOBS: '-companies' }), /^WORKER_JOBS: unknown job module "companies"/);
  assert.match(one({ ROLE: 'worker', WORKER_JOBS: 'webhooks,-mail' }), /^WORKER_JOBS mixes names and -names/);
  assert.match(one({ ROLE: 'worker', WORKER_JOBS: 'webhooks,,mail' }), /^WORKER_JOBS has an empty item/);
  assert.match(one({ ROLE: 'worker', WORKER_JOBS: ',' }), /^WORKER_JOBS has an empty item/);
  assert.match(one({ ROLE: 'worker', WORKER_JOBS: '-' }), /^WORKER_JOBS has an empty item/);
  assert.match(one({ ROLE: 'worker', WORKER_JOBS: JOB_MODULES.map((m) => `-${m}`).join(',') }), /^WORKER_JOBS leaves out every job module/);
  assert.equal(one({ ROLE: 'api', WORKER_JOBS: 'webhooks' }), 'WORKER_JOBS is set but ROLE=api runs no worker');
});

test('WORKER_IDLE_PRIORITY: only with ROLE=worker; listed with every other problem', () => {
  assert.equal(loadConfig({}).workerIdlePriority, false);
  assert.equal(loadConfig({ ROLE: 'worker', WORKER_IDLE_PRIORITY: 'true' }).workerIdlePriority, true);
  assert.equal(loadConfig({ ROLE: 'worker', WORKER_IDLE_PRIORITY: '1' }).workerIdlePriority, true);
  assert.equal(loadConfig({ ROLE: 'worker', WORKER_IDLE_PRIORITY: 'false' }).workerIdlePriority, false);
  assert.equal(loadConfig({ ROLE: 'api', WORKER_IDLE_PRIORITY: 'false' }).workerIdlePriority, false, 'false is harmless anywhere');
  assert.match(problemsOf({ WORKER_IDLE_PRIORITY: 'yes' })[0]!, /^WORKER_IDLE_PRIORITY must be one of true, false, 1, 0/);
  for (const role of ['all', 'api'])
    assert.deepEqual(
      problemsOf({ ROLE: role, WORKER_IDLE_PRIORITY: 'true' }).map((p) => p.split(':')[0]),
      [`WORKER_IDLE_PRIORITY=true needs ROLE=worker (got ROLE=${role})`],
    );
  assert.match(problemsOf({ WORKER_IDLE_PRIORITY: 'true' })[0]!, /needs ROLE=worker \(got ROLE=all\)/, 'the default role is all');
  const all = problemsOf({ ROLE: 'api', WORKER_IDLE_PRIORITY: 'true', WORKER_JOBS: 'nope', PORT: 'x' });
  assert.deepEqual(
    all.map((p) => p.split(/[ :]/)[0]),
    ['PORT', 'WORKER_JOBS', 'WORKER_JOBS', 'WORKER_IDLE_PRIORITY=true'],
    JSON.stringify(all),
  );
});

test('METRICS_PORT: a port of its own, any role; not the port the API listens on', () => {
  assert.equal(loadConfig({ METRICS_PORT: '9464' }).metricsPort, 9464);
  assert.equal(loadConfig({}).metricsPort, null);
  assert.equal(loadConfig({ ROLE: 'worker', PORT: '9464', METRICS_PORT: '9464' }).metricsPort, 9464);
  assert.deepEqual(problemsOf({ PORT: '9464', METRICS_PORT: '9464' }), [
    'METRICS_PORT must differ from PORT (9464), which the API listens on',
  ]);
  assert.ok(problemsOf({ METRICS_PORT: '0' })[0]!.startsWith('METRICS_PORT'));
});

test('a refused URL is quoted with its password masked', () => {
  const problems = problemsOf({ DATABASE_URL: 'postgresql+asyncpg://app:DBPW@db/app', SMTP_URL: 'smtps//u:SMTPPASSWORD99@127.0.0.1' });
  assert.ok(
    problems.some((p) => p.startsWith('DATABASE_URL') && p.includes('app:***@db')),
    problems.join('\n'),
  );
  assert.ok(
    problems.some((p) => p.startsWith('SMTP_URL')),
    problems.join('\n'),
  );
  assert.ok(!problems.join('\n').includes('DBPW') && !problems.join('\n').includes('SMTPPASSWORD99'), problems.join('\n'));
});

test('HOST must be an IP address or a host name, refused with the rest at start', () => {
  for (const host of ['127.0.0.1', '0.0.0.0', '::', '::1', 'localhost', 'api.internal', 'regwatch-api-1'])
    assert.equal(loadConfig({ HOST: host }).host, host, host);
  for (const host of ['no such host', 'http://x', 'a..b', '-x', 'x_y'])
    assert.ok(
      problemsOf({ HOST: host }).some((p) => p.startsWith('HOST must be an IP address or a host name')),
      host,
    );
});

test('METRICS_PORT equal to PORT is fine for a worker, its ROLE trimmed like every value', () => {
  assert.deepEqual(problemsOf({ ROLE: ' worker ', PORT: '9464', METRICS_PORT: '9464', DATABASE_URL: 'postgres://x@127.0.0.1/db' }), []);
});
