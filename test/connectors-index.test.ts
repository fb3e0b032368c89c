import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRegistrySources } from '../src/registry/sources/index.ts';
import { SourceConfigError } from '../src/registry/sources/errors.ts';
import { FIXTURES_DIR, jsonFixtureReply, startFixtureServer } from './helpers/fixture-server.ts';

describe('createRegistrySources', () => {
  const full = {
    krsApiUrl: 'https://api-krs.ms.gov.pl',
    birApiUrl: 'https://wyszukiwarkaregon.stat.gov.pl/wsBIR/UslugaBIRzewnPubl.svc',
    birApiKey: 'k'.repeat(20),
    ceidgApiUrl: 'https://dane.biznes.gov.pl/api/ceidg/v2/',
    ceidgApiToken: 'jwt',
    vatApiUrl: 'https://wl-api.mf.gov.pl',
  };

  test('builds the named live sources in order; file and synthetic are left to the composition root', async () => {
    const sources = createRegistrySources(full, ['vat', 'synthetic', 'krs', 'bir', 'ceidg', 'krs', 'file:/tmp/x.ndjson'], {});
    assert.deepEqual(
      sources.map((s) => s.name),
      ['vat', 'krs', 'bir', 'ceidg'],
    );
    assert.ok(sources.every((s) => typeof s.snapshotsForDate === 'function' && typeof s.lookup === 'function'));
    for (const s of sources) await (s as unknown as { close(): Promise<void> }).close();
  });

  test('a missing URL, key or token is a clear configuration error naming the variable', () => {
    assert.throws(
      () => createRegistrySources({ ...full, krsApiUrl: undefined }, ['krs'], {}),
      (e: unknown) => e instanceof SourceConfigError && /KRS_API_URL/.test(e.message),
    );
    assert.throws(
      () => createRegistrySources({ ...full, birApiKey: undefined }, ['bir'], {}),
      (e: unknown) => e instanceof SourceConfigError && /BIR_API_KEY/.test(e.message),
    );
    assert.throws(
      () => createRegistrySources({ ...full, ceidgApiToken: '' }, ['ceidg'], {}),
      (e: unknown) => e instanceof SourceConfigError && /CEIDG_API_TOKEN/.test(e.message),
    );
    assert.throws(
      () => createRegistrySources({ ...full, vatApiUrl: undefined }, ['vat'], {}),
      (e: unknown) => e instanceof SourceConfigError && /VAT_API_URL/.test(e.message),
    );
    assert.throws(() => createRegistrySources(full, ['gus'], {}), /Unknown registry source "gus"/);
    // Only unused sources may lack configuration.
    assert.deepEqual(createRegistrySources({}, [], {}), []);
  });

  test('the built sources use the configured base URLs (trailing slash tolerated)', async () => {
    const server = await startFixtureServer((req) =>
      req.path === '/api/krs/OdpisAktualny/0001268296' && req.query.get('rejestr') === 'P'
        ? jsonFixtureReply('krs/odpis-aktualny-P-0001268296-spzoo-nowa.json')
        : { status: 404 },
    );
    const [krs] = createRegistrySources({ krsApiUrl: `${server.url}/` }, ['krs'], {});
    const snapshot = await krs!.lookup!({ type: 'KRS', value: '0001268296' });
    await (krs as unknown as { close(): Promise<void> }).close();
    await server.close();
    assert.equal(snapshot!.profiles[0]!.source, 'krs');
  });
});

describe('fixture coverage', () => {
  // Schemas and spreadsheet dictionaries are documentation, not payloads a connector reads.
  const excluded = (rel: string): boolean => rel.startsWith('bir/schema/') || /\.(xsd|wsdl|xlsx|xls)$/.test(rel);

  function listFiles(dir: string, prefix = ''): string[] {
    return readdirSync(dir).flatMap((name) => {
      const full = path.join(dir, name);
      const rel = prefix ? `${prefix}/${name}` : name;
      return statSync(full).isDirectory() ? listFiles(full, rel) : [rel];
    });
  }

  test('every registry fixture under krs/, bir/, ceidg/ and vat-whitelist/ is read by a connector test', () => {
    const testDir = fileURLToPath(new URL('.', import.meta.url));
    const testSources = readdirSync(testDir)
      .filter((f) => /^connectors-.*\.test\.ts$/.test(f) && f !== 'connectors-index.test.ts')
      .map((f) => readFileSync(path.join(testDir, f), 'utf8'))
      .join('\n');
    const fixtures = ['krs', 'bir', 'ceidg', 'vat-whitelist']
      .flatMap((dir) => listFiles(path.join(FIXTURES_DIR, dir), dir))
      .filter((rel) => !excluded(rel));
    assert.ok(fixtures.length > 80, `found ${fixtures.length} fixtures`);
    const unread = fixtures.filter((rel) => !testSources.includes(path.basename(rel)));
    assert.deepEqual(unread, []);
  });
});
