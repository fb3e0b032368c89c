import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { readOpenApiDocument } from '../scripts/openapi-document.ts';
import { generateSdkTypes, SDK_TYPES_FILE } from '../scripts/sdk-generate.ts';
import type * as SdkSource from '../packages/sdk/src/index.ts';
import { createTestApp } from './helpers/app.ts';

type Sdk = typeof SdkSource;

/** The SDK as published: its generated types match the app's document, and both builds load and call the service. */

test("the committed generated types match the app's OpenAPI document (else: npm run sdk:generate)", async () => {
  assert.equal(
    readFileSync(SDK_TYPES_FILE, 'utf8'),
    await generateSdkTypes(),
    'packages/sdk/src/generated/openapi.ts is stale: run `npm run sdk:generate` and commit it',
  );
  // The /docs page (Swagger UI over this document) points at the SDK.
  const { info } = (await readOpenApiDocument()) as { info: { description: string } };
  assert.match(info.description, /`@regwatch\/sdk`.*docs\/sdk\.md/);
});

test('the ESM and CommonJS builds load through the package exports and call the service', async () => {
  const pkg = fileURLToPath(new URL('../packages/sdk/', import.meta.url));
  execFileSync(process.execPath, [`${pkg}build.mjs`], { stdio: 'pipe' });
  const t = await createTestApp({ listen: true });
  // By the package name, as a user's code would (node_modules/@regwatch/sdk is the workspace's
  // link): `import` and `require` pick their build through the exports map.
  const name: string = '@regwatch/sdk';
  const esm = (await import(name)) as Sdk;
  const cjs = createRequire(import.meta.url)(name) as Sdk;
  assert.match(import.meta.resolve(name), /dist\/esm\/index\.js$/);
  assert.match(createRequire(import.meta.url).resolve(name), /dist\/cjs\/index\.js$/);
  for (const sdk of [esm, cjs]) {
    assert.equal((await new sdk.Regwatch({ baseUrl: t.baseUrl }).health()).status, 'ok');
    const e = await new sdk.Regwatch({ baseUrl: t.baseUrl, token: 'sk_live_nope' }).wallet.get().catch((x: unknown) => x);
    assert.ok(e instanceof sdk.AuthenticationError && e instanceof sdk.RegwatchError);
  }
  assert.notEqual(esm.Regwatch, cjs.Regwatch, 'two builds, two module instances');
});
