import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { resolveSource, SourceSpecError } from '../src/registry/sources/resolve.ts';

const config = loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/x', DEMO_COMPANIES: '1000' });
const dir = mkdtempSync(join(tmpdir(), 'regwatch-resolve-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('file:PATH resolves to an absolute key and can count its lines', async () => {
  const path = join(dir, 'a.ndjson');
  writeFileSync(path, '{}\n{}\n{}');
  const r = await resolveSource(`file:${path}`, { config, countFileLines: true });
  assert.equal(r.source.name, 'file');
  assert.equal(r.sourceKey, `file:${path}`);
  assert.equal(r.expectedTotal, 3);
  assert.equal((await resolveSource(`file:${path}`, { config })).expectedTotal, null);
});

test('synthetic with and without a seed', async () => {
  assert.equal((await resolveSource('synthetic', { config })).sourceKey, 'synthetic:1');
  const seeded = await resolveSource('synthetic:42', { config });
  assert.equal(seeded.sourceKey, 'synthetic:42');
  assert.equal(seeded.source.name, 'synthetic');
});

test('bad specs are SourceSpecErrors', async () => {
  for (const spec of ['file:', `file:${join(dir, 'missing.ndjson')}`, `file:${dir}`, 'synthetic:', 'ftp:x', 'KRS ']) {
    await assert.rejects(resolveSource(spec, { config }), SourceSpecError, spec);
  }
});

test('a live source without its URL is a SourceSpecError naming the variable', async () => {
  await assert.rejects(resolveSource('krs', { config }), (e: Error) => e instanceof SourceSpecError && /KRS_API_URL/.test(e.message));
  const withKrs = loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/x', KRS_API_URL: 'http://127.0.0.1:9/api/krs' });
  const r = await resolveSource('krs', { config: withKrs });
  assert.equal(r.source.name, 'krs');
  assert.equal(r.sourceKey, 'krs');
});
