import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { runDaily } from '../src/registry/daily.ts';
import type { CompanySnapshot } from '../src/registry/model.ts';
import type { RegistrySource } from '../src/registry/sources/source.ts';
import { createTestDatabase } from './helpers/db.ts';
import { companySnapshot } from './helpers/registry.ts';

/**
 * DECISIONS 5: "The same change seen in two profiles of one company gives one event." With two
 * sources configured (REGISTRY_SOURCES=krs,bir), each source's daily run updates its own profile;
 * when both registries report the same change on the same day, the second run records no second
 * event, and counts none. A different change of the same day is still its own event.
 */

function withEmail(n: number, source: 'krs' | 'bir', email: string): CompanySnapshot {
  const s = companySnapshot({ n, contacts: [{ type: 'email', value: email }] });
  s.profiles = s.profiles.map((p) => ({ ...p, source }));
  return s;
}

function sourceOf(name: 'krs' | 'bir', snapshots: CompanySnapshot[]): RegistrySource {
  return {
    name,
    async *snapshotsForDate() {
      yield* snapshots;
    },
  } as RegistrySource;
}

test('one e-mail change reported by KRS and by BIR on the same day is one event', async () => {
  const db = await createTestDatabase();
  for (const source of ['krs', 'bir'] as const)
    await runDaily(db.db, { date: '2026-11-20', source: sourceOf(source, [withEmail(1, source, 'old@example.pl')]), sourceKey: source });
  for (const source of ['krs', 'bir'] as const)
    await runDaily(db.db, { date: '2026-11-21', source: sourceOf(source, [withEmail(1, source, 'new@example.pl')]), sourceKey: source });

  const { rows } = await sql<{ event_type: string; old_value: string | null; new_value: string | null }>`
    SELECT event_type, old_value, new_value FROM events WHERE event_date = '2026-11-21' ORDER BY id`.execute(db.db);
  assert.deepEqual(rows, [{ event_type: 'COMPANY_EMAIL_CHANGED', old_value: 'old@example.pl', new_value: 'new@example.pl' }]);
  const runs = await sql<{ source: string; events: number }>`
    SELECT source, events_count AS events FROM daily_runs WHERE run_date = '2026-11-21' ORDER BY source`.execute(db.db);
  assert.deepEqual(
    runs.rows.map((r) => [r.source, Number(r.events)]),
    [
      ['bir', 0],
      ['krs', 1],
    ],
  );

  // BIR alone sees a further change the next day: its own event.
  await runDaily(db.db, { date: '2026-11-22', source: sourceOf('krs', [withEmail(1, 'krs', 'new@example.pl')]), sourceKey: 'krs' });
  await runDaily(db.db, { date: '2026-11-22', source: sourceOf('bir', [withEmail(1, 'bir', 'other@example.pl')]), sourceKey: 'bir' });
  const next = await sql<{ new_value: string | null }>`SELECT new_value FROM events WHERE event_date = '2026-11-22'`.execute(db.db);
  assert.deepEqual(next.rows, [{ new_value: 'other@example.pl' }]);
});
