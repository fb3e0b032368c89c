import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase } from './helpers/db.ts';
import { serveEnv, serveProcess } from './helpers/serve.ts';
import { waitFor } from './helpers/wait.ts';

/**
 * PORT=0 (a free port from the system): the "regwatch is ready" line, PUBLIC_BASE_URL's default
 * (the links the service sends) and the OpenAPI document's server name the port that answers,
 * not 0. A real `regwatch serve` process.
 */

const t = await createTestDatabase();

test('PORT=0: the ready line and the OpenAPI server name the port the API listens on', async () => {
  const env = serveEnv(t.url, { PORT: '0' });
  delete env.PUBLIC_BASE_URL;
  const p = serveProcess(env);
  await waitFor('the ready line', () => p.output().includes('regwatch is ready'), 60_000);
  const ready = p
    .output()
    .split('\n')
    .filter((l) => l.includes('regwatch is ready'))
    .map((l) => JSON.parse(l) as { url: string })[0]!;
  assert.match(ready.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.notEqual(new URL(ready.url).port, '0', p.output());
  const health = await fetch(`${ready.url}/health`);
  assert.equal(health.status, 200);
  const doc = (await (await fetch(`${ready.url}/api/v1/openapi.json`)).json()) as { servers: { url: string }[] };
  assert.deepEqual(doc.servers, [{ url: ready.url }]);
});
