/**
 * The OpenAPI document the service serves at /api/v1/openapi.json, built in-process through the
 * composition root without a database (nothing is queried: the pool connects lazily and the search
 * engine is told to stay in SQL, so it builds no index). The SDK's generated types come from it
 * (scripts/sdk-generate.ts) and a test compares the committed file with it.
 */
import pino from 'pino';
import { buildStandaloneApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createCompanySearchEngine } from '../src/modules/companies/search-engine.ts';

/** The document as the running app serves it (fixed server URL, so the output does not depend on the environment). */
export async function readOpenApiDocument(): Promise<Record<string, unknown>> {
  const config = loadConfig({
    DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
    REGISTRY_SOURCES: '',
    PUBLIC_BASE_URL: 'https://regwatch.example',
    LOG_LEVEL: 'silent',
  });
  const handle = createDatabase(config.databaseUrl!, { max: 1 });
  const logger = pino({ level: 'silent' });
  const companySearch = createCompanySearchEngine({ db: handle.db, logger, mode: 'sql' });
  const app = await buildStandaloneApp(
    { config, db: handle.db, logger, clock: systemClock },
    { overrides: { companySearch, registrySources: [], mailTransport: null } },
  );
  try {
    const res = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`openapi.json: ${res.statusCode} ${res.body}`);
    return res.json();
  } finally {
    await app.close();
    await companySearch.stop();
    await handle.close();
  }
}
