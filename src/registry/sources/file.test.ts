import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompanySnapshot } from '../model.ts';
import { createFileSource, parseSnapshotLine } from './file.ts';

const dir = mkdtempSync(join(tmpdir(), 'regwatch-file-source-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

let fileCounter = 0;
function writeLines(lines: string[]): string {
  const path = join(dir, `snapshots-${++fileCounter}.ndjson`);
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

async function collect(iterable: AsyncIterable<CompanySnapshot>): Promise<CompanySnapshot[]> {
  const out: CompanySnapshot[] = [];
  for await (const s of iterable) out.push(s);
  return out;
}

const FULL: CompanySnapshot = {
  identity: {
    identifiers: [
      { type: 'NIP', value: '5261040828' },
      { type: 'KRS', value: '0000028860' },
    ],
    company_type: 'OSOBA PRAWNA',
    country_code: 'PL',
  },
  profiles: [
    {
      source: 'krs',
      name: 'ORLEN SPÓŁKA AKCYJNA',
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
      units: [{ identifier: '61018820100000', name: 'Oddział', address: null, dates: [{ type: 'activity_start', date: '2001-01-01' }] }],
      contacts: [{ type: 'email', value: 'biuro@example.pl' }],
      activities: [{ code: '1920Z', name: 'WYTWARZANIE I PRZETWARZANIE PRODUKTÓW RAFINACJI ROPY NAFTOWEJ', is_primary: true }],
      dates: [{ type: 'registration', date: '2001-07-05' }],
      websites: ['https://www.orlen.pl'],
      vat_status: 'Czynny',
      bank_accounts: ['61109010140000071219812874'],
    },
  ],
  persons: [{ full_name: 'Jan Kowalski', role: 'PREZES ZARZĄDU' }],
};

test('a complete line is read unchanged', () => {
  const result = parseSnapshotLine(JSON.stringify(FULL));
  assert.ok(result.ok);
  assert.deepEqual(result.snapshot, FULL);
  assert.deepEqual(result.warnings, []);
});

test('missing parts get their defaults and values are normalised', () => {
  const line = JSON.stringify({
    identity: {
      identifiers: [
        { type: 'NIP', value: 'PL 526-104-08-28' },
        { type: 'KRS', value: '28860' },
        { type: 'REGON9', value: 610188201 },
      ],
    },
    profiles: [
      {
        name: 'ORLEN',
        activities: [
          { code: '62.10.b', is_primary: true },
          { code: '19.20.Z', name: 'RAFINACJA' },
        ],
        bank_accounts: ['PL61 1090 1014 0000 0712 1981 2874'],
      },
    ],
  });
  const result = parseSnapshotLine(line);
  assert.ok(result.ok, JSON.stringify(result));
  const s = result.snapshot;
  assert.deepEqual(s.identity, {
    identifiers: [
      { type: 'NIP', value: '5261040828' },
      { type: 'KRS', value: '0000028860' },
      { type: 'REGON9', value: '610188201' },
    ],
    company_type: '',
    country_code: 'PL',
  });
  assert.deepEqual(s.persons, []);
  const p = s.profiles[0]!;
  assert.equal(p.source, 'file');
  assert.equal(p.address, null);
  assert.deepEqual([p.units, p.contacts, p.dates, p.websites], [[], [], [], []]);
  assert.equal(p.vat_status, null);
  assert.deepEqual(p.activities, [
    { code: '6210B', name: 'POZOSTAŁA DZIAŁALNOŚĆ W ZAKRESIE PROGRAMOWANIA', is_primary: true },
    { code: '1920Z', name: 'RAFINACJA', is_primary: false },
  ]);
  assert.deepEqual(p.bank_accounts, ['61109010140000071219812874']);
  assert.deepEqual(result.warnings, []);
});

test('malformed lines are rejected with a reason', () => {
  const cases: Array<[string, RegExp]> = [
    ['{not json', /invalid JSON/],
    ['[1,2]', /JSON object/],
    ['"text"', /JSON object/],
    ['{}', /missing identity/],
    ['{"identity":{}}', /missing identity\.identifiers/],
    ['{"identity":{"identifiers":[]}}', /missing identity\.identifiers/],
    ['{"identity":{"identifiers":[{"type":"NIP","value":"1234567890"}]}}', /no valid identifier.*NIP/],
    ['{"identity":{"identifiers":[{"type":"PESEL","value":"1"}]}}', /no valid identifier.*unknown type/],
    ['{"identity":{"identifiers":[{"type":"KRS","value":"28860"}]},"profiles":{}}', /profiles must be an array/],
    // Text PostgreSQL cannot store, named by its field, whatever the rest of the line holds.
    [
      '{"identity":{"identifiers":[{"type":"KRS","value":"28860"}]},"profiles":[{"name":"Nul \\u0000 name"}]}',
      /^text that cannot be stored \(a NUL or an unpaired surrogate\) in profiles\.0\.name$/,
    ],
    ['{"identity":{"identifiers":[{"type":"KRS","value":"28860"}],"company_type":"\\ud800"}}', /cannot be stored.* identity\.company_type/],
  ];
  for (const [line, reason] of cases) {
    const result = parseSnapshotLine(line);
    assert.equal(result.ok, false, line);
    assert.match((result as { error: string }).error, reason, line);
  }
});

test('escapes of storable text (a pair, Polish letters, a quote) keep the line', () => {
  const line =
    '{"identity":{"identifiers":[{"type":"KRS","value":"28860"}]},"profiles":[{"name":"\\u0141\\u00f3d\\u017a \\ud83d\\ude00 \\u0022"}]}';
  const result = parseSnapshotLine(line);
  assert.equal(result.ok, true, JSON.stringify(result));
});

test('unusable parts of a usable line are dropped with a warning', () => {
  const result = parseSnapshotLine(
    JSON.stringify({
      identity: {
        identifiers: [
          { type: 'NIP', value: '1234567890' },
          { type: 'KRS', value: '28860' },
        ],
      },
      profiles: [
        {
          source: 'gus',
          contacts: [
            { type: 'pager', value: '1' },
            { type: 'PHONE', value: '+48 22 123 45 67' },
          ],
          dates: [
            { type: 'registration', date: '2024-02-30' },
            { type: 'closure', date: '2024-03-01T00:00:00Z' },
          ],
          units: [{ name: 'no identifier' }],
        },
      ],
      persons: [{ role: 'PREZES' }, { full_name: 'Anna Nowak' }],
    }),
  );
  assert.ok(result.ok);
  const p = result.snapshot.profiles[0]!;
  assert.deepEqual(result.snapshot.identity.identifiers, [{ type: 'KRS', value: '0000028860' }]);
  assert.equal(p.source, 'file');
  assert.deepEqual(p.contacts, [{ type: 'phone', value: '+48 22 123 45 67' }]);
  assert.deepEqual(p.dates, [{ type: 'closure', date: '2024-03-01' }]);
  assert.deepEqual(p.units, []);
  assert.deepEqual(result.snapshot.persons, [{ full_name: 'Anna Nowak', role: '' }]);
  assert.equal(result.warnings.length, 6, result.warnings.join('\n'));
  assert.ok(result.warnings.some((w) => w.startsWith('identity.identifiers.0')));
});

test('the stream yields every good line and reports bad ones by line number', async () => {
  const good = (krs: string) => JSON.stringify({ identity: { identifiers: [{ type: 'KRS', value: krs }] } });
  const path = writeLines(['\uFEFF' + good('1'), '', '{broken', good('2'), '{"identity":{}}', '   ', good('3')]);
  const errors: Array<[number, string]> = [];
  const source = createFileSource(path, { onError: (n, m) => errors.push([n, m]) });
  assert.equal(source.name, 'file');
  const snapshots = await collect(source.snapshotsForDate('2026-03-01'));
  assert.deepEqual(
    snapshots.map((s) => s.identity.identifiers[0]!.value),
    ['0000000001', '0000000002', '0000000003'],
  );
  assert.deepEqual(
    errors.map(([n]) => n),
    [3, 5],
  );
  assert.match(errors[0]![1], /invalid JSON/);
  // The date does not filter: another day reads the same lines.
  assert.equal((await collect(source.snapshotsForDate('1999-01-01'))).length, 3);
});

test('CRLF line endings and a last line without newline are read', async () => {
  const path = join(dir, 'crlf.ndjson');
  const line = (krs: string) => JSON.stringify({ identity: { identifiers: [{ type: 'KRS', value: krs }] } });
  writeFileSync(path, `${line('7')}\r\n${line('8')}`);
  const snapshots = await collect(createFileSource(path).snapshotsForDate('2026-03-01'));
  assert.deepEqual(
    snapshots.map((s) => s.identity.identifiers[0]!.value),
    ['0000000007', '0000000008'],
  );
});

test('a missing file fails the run', async () => {
  await assert.rejects(collect(createFileSource(join(dir, 'nope.ndjson')).snapshotsForDate('2026-03-01')), /ENOENT/);
});

test('an aborted run stops reading', async () => {
  const line = JSON.stringify({ identity: { identifiers: [{ type: 'KRS', value: '1' }] } });
  const path = writeLines(Array.from({ length: 100 }, () => line));
  const controller = new AbortController();
  let seen = 0;
  await assert.rejects(
    (async () => {
      for await (const _ of createFileSource(path).snapshotsForDate('2026-03-01', { signal: controller.signal })) {
        if (++seen === 10) controller.abort();
      }
    })(),
    { name: 'AbortError' },
  );
  assert.equal(seen, 10);
});

test('a large file streams with flat memory', async () => {
  const path = join(dir, 'large.ndjson');
  const out = createWriteStream(path);
  const lines = 200_000;
  const pad = 'x'.repeat(400);
  for (let i = 1; i <= lines; i++) {
    const row =
      JSON.stringify({ identity: { identifiers: [{ type: 'KRS', value: String(i) }] }, profiles: [{ name: `FIRMA ${i} ${pad}` }] }) + '\n';
    if (!out.write(row)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  // ~90 MB of JSON; holding it (or its parsed objects) would grow the heap far past this bound.
  global.gc?.();
  const before = process.memoryUsage().heapUsed;
  let count = 0;
  let peak = before;
  for await (const _ of createFileSource(path).snapshotsForDate('2026-03-01')) {
    if (++count % 20_000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
  }
  assert.equal(count, lines);
  assert.ok(peak - before < 60 * 1024 * 1024, `heap grew by ${Math.round((peak - before) / 1e6)} MB`);
});

test('lines longer than a read chunk, with multi-byte characters across its edges, are read whole', async () => {
  // The reader splits bytes at LF before decoding, in chunks of 64 KiB: a 2.5 MB name of two- and
  // three-byte characters, after an odd-length prefix, puts chunk edges inside characters and lines.
  const name = (i: number) => `${'x'.repeat(i)}${'ŻÓŁĆ€'.repeat(250_000)}${i}`;
  const line = (i: number) =>
    JSON.stringify({ identity: { identifiers: [{ type: 'KRS', value: String(i) }] }, profiles: [{ name: name(i) }] });
  const path = join(dir, 'long-lines.ndjson');
  writeFileSync(path, [1, 2, 3].map(line).join('\r\n') + '\n\n');
  const snapshots = await collect(createFileSource(path).snapshotsForDate('2026-03-01'));
  assert.deepEqual(
    snapshots.map((s) => s.profiles[0]!.name === name(Number(s.identity.identifiers[0]!.value))),
    [true, true, true],
  );
});
