import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_BACKFILL_DAYS } from './backfill.ts';
import { createBirSource, createCeidgSource, createKrsSource, createVatSource } from './index.ts';
import { createFileSource } from './file.ts';
import { createSyntheticSource } from './synthetic.ts';

test('each connector declares the reach the scheduler plans with', async () => {
  const sources = [
    createKrsSource({ baseUrl: 'http://127.0.0.1:1/api/krs' }),
    createBirSource({ baseUrl: 'http://127.0.0.1:1/bir', apiKey: 'key' }),
    createCeidgSource({ baseUrl: 'http://127.0.0.1:1/api/ceidg/v2', token: 'token' }),
    createVatSource({ baseUrl: 'http://127.0.0.1:1' }),
    createSyntheticSource({ seed: '1', size: 10 }),
    createFileSource('/nonexistent.ndjson'),
  ];
  try {
    assert.deepEqual(Object.fromEntries(sources.map((s) => [s.name, s.maxBackfillDays])), MAX_BACKFILL_DAYS);
    assert.equal(MAX_BACKFILL_DAYS.bir, 7);
    assert.equal(MAX_BACKFILL_DAYS.krs, null);
  } finally {
    await Promise.all(sources.map(async (s) => s.close?.()));
  }
});
