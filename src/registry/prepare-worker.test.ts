import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompanySnapshot } from './model.ts';
import { isSkip, jsonOf, prepareEntry, type PreparedEntry, type PreparedItem } from './prepare.ts';
import { companyRow } from './store/company-rows.ts';
import { discardPrestartedWorker, prepareFileInWorker, prestartPrepareWorker } from './prepare-worker.ts';
import { createFileSource, parseSnapshotLine } from './sources/file.ts';

const dir = mkdtempSync(join(tmpdir(), 'regwatch-prepare-worker-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function company(n: number, name: string): CompanySnapshot {
  return {
    identity: {
      identifiers: [
        { type: 'NIP', value: '5261040828' },
        { type: 'KRS', value: String(n) },
      ],
      company_type: 'spółka',
      country_code: 'PL',
    },
    profiles: [
      {
        source: 'krs',
        name,
        status: 'aktywny',
        legal_form: 'SPÓŁKA AKCYJNA',
        address: {
          street: 'ul. Chemików',
          building: '7',
          apartment: '',
          city: 'Płock',
          postal_code: '09-411',
          voivodeship: 'mazowieckie',
          country_code: 'PL',
        },
        units: [],
        contacts: [
          { type: 'phone', value: '+48 24 111 11 11' },
          { type: 'email', value: 'biuro@example.pl' },
        ],
        activities: [{ code: '19.20.Z', name: '', is_primary: true }],
        dates: [{ type: 'registration', date: '2001-07-05' }],
        websites: [],
        vat_status: null,
        bank_accounts: [],
      },
    ],
    persons: [{ full_name: 'Jan Kowalski', role: 'PREZES' }],
  };
}

function comparable(entries: PreparedEntry[]) {
  return entries.map((e) =>
    isSkip(e)
      ? { skipped: true, error: e.error === null ? null : (e.error as Error).message }
      : // The worker sends a new company's row as bytes; this thread builds the same row as text.
        {
          identifiers: e.identifiers,
          json: jsonOf(e),
          fingerprint: e.fingerprint,
          row: e.row !== null ? e.row.toString('utf8') : e.fields === null ? null : companyRow(jsonOf(e), e.fields),
          columnsError: e.columnsError,
        },
  );
}

test('the worker prepares a file exactly as the main thread would, and reports its lines in order', async () => {
  // Names with a separator character and a quote must survive the trip between threads.
  const lines = [
    JSON.stringify(company(28860, 'ORLEN SPÓŁKA AKCYJNA')),
    '{not json',
    JSON.stringify({ ...company(28861, 'A\u001eB\u001f "C"'), persons: [{ full_name: '', role: 'x' }] }),
    ...Array.from({ length: 1200 }, (_, i) => JSON.stringify(company(30000 + i, `FIRMA ${i}`))),
  ];
  const path = join(dir, 'day.ndjson');
  writeFileSync(path, lines.join('\n') + '\n');

  const expectedLogs: string[] = [];
  const expected: PreparedEntry[] = [];
  const source = createFileSource(path, {
    onError: (l, m) => expectedLogs.push(`E${l}:${m}`),
    onWarning: (l, m) => expectedLogs.push(`W${l}:${m}`),
  });
  for await (const raw of source.snapshotsForDate('2026-11-01')) expected.push(prepareEntry(raw, true, true));

  const logs: string[] = [];
  const chunks = prepareFileInWorker(path, '2026-11-01', {
    onError: (l, m) => logs.push(`E${l}:${m}`),
    onWarning: (l, m) => logs.push(`W${l}:${m}`),
  });
  const got: PreparedEntry[] = [];
  let chunkCount = 0;
  for (let c = await chunks.next(); c !== null; c = await chunks.next()) {
    got.push(...c);
    chunkCount++;
  }
  assert.equal(got.length, 1202);
  assert.ok(chunkCount > 1, 'a large file comes in several chunks');
  assert.deepEqual(comparable(got), comparable(expected));
  assert.deepEqual(logs, expectedLogs);
  assert.ok(logs.some((l) => l.startsWith('E2:')) && logs.some((l) => l.startsWith('W3:')), logs.join('\n'));
  const odd = got[1]! as PreparedItem;
  assert.equal(jsonOf(odd).includes('A\\u001eB\\u001f \\"C\\"'), true);
  // In the row's other fields a control character is a space, so it cannot split the row.
  assert.equal(odd.row!.toString('utf8').split('\x1f')[3], 'A B  "C"');
  assert.equal(odd.row!.toString('utf8'), companyRow(jsonOf(odd), (expected[1] as PreparedItem).fields!));
});

test('a missing file fails with its error code, and close stops the worker early', async () => {
  const missing = prepareFileInWorker(join(dir, 'missing.ndjson'), '2026-11-01', {});
  await assert.rejects(missing.next(), (e: Error & { code?: string }) => e.code === 'ENOENT');

  const path = join(dir, 'big.ndjson');
  writeFileSync(path, Array.from({ length: 5000 }, (_, i) => JSON.stringify(company(40000 + i, `F ${i}`))).join('\n'));
  const chunks = prepareFileInWorker(path, '2026-11-01', {});
  assert.ok(((await chunks.next()) ?? []).length > 0);
  // Without rows (a day over an existing registry): the same snapshots, no row fields.
  const bare = prepareFileInWorker(path, '2026-11-01', {}, false);
  try {
    const first = (await bare.next())![0] as PreparedItem;
    assert.equal(first.fields, null);
    assert.equal(first.row, null);
    const parsed = parseSnapshotLine(JSON.stringify(company(40000, 'F 0')));
    assert.ok(parsed.ok);
    assert.equal(jsonOf(first), jsonOf(prepareEntry(parsed.snapshot, false, true) as PreparedItem));
  } finally {
    await bare.close();
  }
  await chunks.close();
  assert.equal(await chunks.next(), null);
});

test("a line larger than the worker's chunk buffer crosses whole, between ordinary ones", async () => {
  // The chunk buffer starts at 2 MB and grows when an entry needs more (ChunkWriter.reserve).
  const big = company(50001, 'DUŻA SPÓŁKA');
  big.profiles[0]!.websites = Array.from({ length: 60_000 }, (_, i) => `https://przykład-${i}.pl/ścieżka`);
  const lines = [JSON.stringify(company(50000, 'PRZED')), JSON.stringify(big), JSON.stringify(company(50002, 'PO'))];
  const path = join(dir, 'big-line.ndjson');
  writeFileSync(path, lines.join('\n'));
  const expected: PreparedEntry[] = [];
  for await (const raw of createFileSource(path).snapshotsForDate('2026-11-01')) expected.push(prepareEntry(raw, true, true));
  assert.ok(jsonOf(expected[1] as PreparedItem).length * 2 > 2 ** 21, 'the line needs more than the initial buffer');
  const chunks = prepareFileInWorker(path, '2026-11-01', {});
  const got: PreparedEntry[] = [];
  for (let c = await chunks.next(); c !== null; c = await chunks.next()) got.push(...c);
  assert.deepEqual(comparable(got), comparable(expected));
});

test('a worker started ahead of its input prepares the file the same; one no run takes is ended', async () => {
  const lines = Array.from({ length: 1100 }, (_, i) => JSON.stringify(company(70000 + i, `WCZEŚNIEJ ${i}`)));
  const path = join(dir, 'prestarted.ndjson');
  writeFileSync(path, lines.join('\n') + '\n');
  const drain = async (chunks: ReturnType<typeof prepareFileInWorker>) => {
    const got: PreparedEntry[] = [];
    for (let c = await chunks.next(); c !== null; c = await chunks.next()) got.push(...c);
    return got;
  };
  const expected = await drain(prepareFileInWorker(path, '2026-11-01', {}));

  prestartPrepareWorker();
  // Its module loaded (and its early state kept) before it is given the file.
  await new Promise((r) => setTimeout(r, 300));
  const got = await drain(prepareFileInWorker(path, '2026-11-01', {}));
  assert.deepEqual(comparable(got), comparable(expected));

  // Taken at once (still loading), and given a missing file: the file's error, as without it.
  prestartPrepareWorker();
  const missing = prepareFileInWorker(join(dir, 'missing.ndjson'), '2026-11-01', {});
  await assert.rejects(missing.next(), (e: Error & { code?: string }) => e.code === 'ENOENT');

  // Not taken: ended; the next run starts its own.
  prestartPrepareWorker();
  await discardPrestartedWorker();
  await discardPrestartedWorker();
  assert.equal((await drain(prepareFileInWorker(path, '2026-11-01', {}))).length, 1100);
});
