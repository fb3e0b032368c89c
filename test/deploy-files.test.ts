import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../src/config.ts';

/**
 * The deployment files (docs/deployment.md), which no engine on this machine runs: the image holds
 * everything the service reads at run time, and every service of deploy/compose.yaml starts on
 * the file's own defaults (a configuration error would exit 78 and restart forever).
 */

const root = new URL('../', import.meta.url);

test('the image copies every directory the service reads at run time', () => {
  const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8');
  const copied = [...dockerfile.matchAll(/^COPY (\S+) /gm)].map((m) => m[1]);
  for (const dir of ['bin', 'src', 'data']) assert.ok(copied.includes(dir), `COPY ${dir}: ${copied.join(', ')}`);
});

test("every compose service's configuration loads with the file's defaults", () => {
  const compose = readFileSync(new URL('deploy/compose.yaml', root), 'utf8');
  const block = /environment: &env\n((?: {4}.*\n)+)/.exec(compose);
  assert.ok(block, 'the shared environment block');
  const env: Record<string, string> = {};
  for (const line of block[1]!.split('\n')) {
    const m = /^ {4}([A-Z_]+): (.*)$/.exec(line);
    if (!m) continue;
    const value = m[2]!.trim();
    const fallback = /^\$\{[A-Z_]+:-(.*)\}$/.exec(value);
    env[m[1]!] = fallback ? fallback[1]! : value.replace(/^'(.*)'$/, '$1');
  }
  assert.ok(env.DATABASE_URL && 'REGISTRY_SOURCES' in env, JSON.stringify(env));
  const roles = [...compose.matchAll(/environment: \{ <<: \*env, (.*) \}/g)].map((m) =>
    Object.fromEntries(m[1]!.split(', ').map((kv) => kv.split(': ').map((x) => x.replace(/^'(.*)'$/, '$1')) as [string, string])),
  );
  assert.equal(roles.length, 3, 'api, worker and webhooks');
  for (const role of [{}, ...roles]) assert.doesNotThrow(() => loadConfig({ ...env, ...role }), JSON.stringify(role));
});
