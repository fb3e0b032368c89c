import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EVENT_TYPES, type CompanySnapshot, type EventType } from '../../model.ts';
import { isValidRegon14, parseIdentifier } from '../../../lib/identifiers.ts';
import { diffSnapshots } from '../../diff.ts';
import { cities, legalFormBySlug, legalFormSlugForLabel, pkdEntry, pkdName, voivodeships } from '../../dictionaries.ts';
import { createSyntheticSource, parseSyntheticSourceSpec, SYNTHETIC_DEFAULTS } from '../synthetic.ts';
import { FARM_COOP_TRADE, HOUSING_COOP_TRADE, NONPROFIT_TRADE, SPORTS_CLUB_TRADE, TRADES } from './data.ts';

async function collect(iterable: AsyncIterable<CompanySnapshot>, limit = Infinity): Promise<CompanySnapshot[]> {
  const out: CompanySnapshot[] = [];
  for await (const s of iterable) {
    out.push(s);
    if (out.length >= limit) break;
  }
  return out;
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

function idOf(s: CompanySnapshot, type: 'NIP' | 'REGON9' | 'KRS'): string | undefined {
  return s.identity.identifiers.find((i) => i.type === type)?.value;
}

/** REGON never changes in the synthetic registry, so it keys a company across days. */
const regonOf = (s: CompanySnapshot) => idOf(s, 'REGON9')!;

function ibanValid(nrb: string): boolean {
  // PL = 25 21; move the country code and check digits to the end.
  return BigInt(`${nrb.slice(2)}2521${nrb.slice(0, 2)}`) % 97n === 1n;
}

test('the defaults and the source spec', () => {
  const source = createSyntheticSource();
  assert.equal(source.name, 'synthetic');
  assert.deepEqual([source.seed, source.size, source.epoch], [String(SYNTHETIC_DEFAULTS.seed), SYNTHETIC_DEFAULTS.size, '2026-01-01']);
  assert.deepEqual(parseSyntheticSourceSpec('synthetic'), { seed: '1' });
  assert.deepEqual(parseSyntheticSourceSpec('synthetic:42'), { seed: '42' });
  assert.equal(parseSyntheticSourceSpec('synthetic:'), null);
  assert.equal(parseSyntheticSourceSpec('file:x'), null);
  assert.throws(() => createSyntheticSource({ size: -1 }), RangeError);
  assert.throws(() => createSyntheticSource({ size: 1.5 }), RangeError);
  assert.throws(() => createSyntheticSource({ epoch: '2026-02-30' }), RangeError);
  assert.throws(() => createSyntheticSource({ seed: ' ' }), RangeError);
});

test('the same seed and date give the same registry; another seed another one', async () => {
  const a = createSyntheticSource({ seed: 7, size: 3000 });
  const b = createSyntheticSource({ seed: '7', size: 3000 });
  const c = createSyntheticSource({ seed: 8, size: 3000 });
  for (const date of ['2026-01-01', '2026-04-15']) {
    const fromA = await collect(a.allSnapshots(date), 300);
    assert.deepEqual(fromA, await collect(b.allSnapshots(date), 300));
    const fromC = await collect(c.allSnapshots(date), 300);
    assert.notDeepEqual(fromA.map(regonOf), fromC.map(regonOf));
  }
  const day = '2026-03-10';
  const changedA = await collect(a.snapshotsForDate(day));
  assert.ok(changedA.length > 0);
  assert.deepEqual(changedA, await collect(b.snapshotsForDate(day)));
  assert.notDeepEqual(changedA.map(regonOf), (await collect(c.snapshotsForDate(day))).map(regonOf));
});

test('company i depends on the seed and i only, not on the registry size', async () => {
  const small = createSyntheticSource({ seed: 3, size: 50 });
  const large = createSyntheticSource({ seed: 3, size: 5000 });
  const date = '2026-06-01';
  const all = await collect(small.allSnapshots(date));
  assert.equal(all.length, 50);
  for (const i of [0, 17, 49]) {
    assert.deepEqual(small.snapshotOf(i, date), all[i]);
    assert.deepEqual(large.snapshotOf(i, date), all[i]);
  }
  assert.equal(small.snapshotOf(50, date), null);
  assert.equal(small.snapshotOf(-1, date), null);
});

test('every identifier is valid, unique, and KRS only for forms registered in KRS', async () => {
  const source = createSyntheticSource({ seed: 11, size: 8000 });
  const snapshots = await collect(source.allSnapshots('2026-09-30', { includeRegistered: true }));
  assert.ok(snapshots.length > 8000, 'registrations after the epoch are included on request');
  const seen = { NIP: new Set<string>(), REGON9: new Set<string>(), KRS: new Set<string>() };
  for (const s of snapshots) {
    const types = s.identity.identifiers.map((i) => i.type);
    assert.equal(new Set(types).size, types.length, 'one identifier of each type');
    for (const { type, value } of s.identity.identifiers) {
      const parsed = parseIdentifier(type, value);
      assert.ok(parsed.ok, `${type} ${value}`);
      assert.equal(parsed.value, value, `${type} ${value} is stored in normal form`);
      assert.ok(!seen[type].has(value), `${type} ${value} twice`);
      seen[type].add(value);
    }
    assert.ok(idOf(s, 'NIP') && idOf(s, 'REGON9'));
    const slug = legalFormSlugForLabel(s.profiles[0]!.legal_form);
    assert.ok(slug, s.profiles[0]!.legal_form);
    assert.equal(idOf(s, 'KRS') !== undefined, legalFormBySlug(slug)!.register === 'krs', `${slug} ${idOf(s, 'KRS')}`);
    for (const unit of s.profiles[0]!.units) {
      assert.ok(isValidRegon14(unit.identifier), unit.identifier);
      assert.ok(unit.identifier.startsWith(idOf(s, 'REGON9')!));
    }
    for (const account of s.profiles[0]!.bank_accounts) {
      assert.match(account, /^\d{26}$/);
      assert.ok(ibanValid(account), account);
    }
  }
});

test('companies look like Polish companies', async () => {
  const source = createSyntheticSource({ seed: 5, size: 6000 });
  const snapshots = await collect(source.allSnapshots('2026-01-01'));
  const voivodeshipNames = new Set(voivodeships().map((v) => v.name));
  const cityByName = new Map(cities().map((c) => [c.name, c]));
  const forms = new Map<string, number>();
  const statuses = new Set(['aktywny', 'zawieszony', 'w likwidacji', 'w upadłości']);
  for (const s of snapshots) {
    assert.equal(s.profiles.length, 1);
    const p = s.profiles[0]!;
    assert.equal(p.source, 'synthetic');
    assert.ok(p.name.length > 3);
    assert.ok(statuses.has(p.status), p.status);
    assert.ok(['Czynny', 'Zwolniony', 'Niezarejestrowany'].includes(p.vat_status!), String(p.vat_status));
    if (p.vat_status === 'Niezarejestrowany') assert.deepEqual(p.bank_accounts, []);
    const slug = legalFormSlugForLabel(p.legal_form)!;
    forms.set(slug, (forms.get(slug) ?? 0) + 1);
    assert.equal(s.identity.company_type, legalFormBySlug(slug)!.basic_form);
    assert.equal(s.identity.country_code, 'PL');

    for (const address of [p.address, ...p.units.map((u) => u.address)]) {
      if (address === null) continue;
      assert.ok(voivodeshipNames.has(address.voivodeship), address.voivodeship);
      const city = cityByName.get(address.city);
      assert.ok(city, address.city);
      assert.equal(city.voivodeship, address.voivodeship);
      assert.match(address.postal_code, /^\d{2}-\d{3}$/);
      assert.ok(address.postal_code >= city.postal_from && address.postal_code <= city.postal_to, `${address.postal_code} in ${city.name}`);
      assert.match(address.street, /^(ul\.|al\.|pl\.|Rynek)/);
      assert.match(address.building, /^\d+[A-C]?$/);
    }

    assert.ok(p.activities.length >= 1 && p.activities.length <= 7, `${p.activities.length} activities`);
    assert.equal(p.activities.filter((a) => a.is_primary).length, 1);
    for (const a of p.activities) {
      const entry = pkdEntry(a.code, 2025) ?? pkdEntry(a.code, 2007);
      assert.equal(entry?.level, 'subclass', a.code);
      assert.ok(a.name === pkdName(a.code, 2025) || a.name === pkdName(a.code, 2007), `${a.code} ${a.name}`);
    }

    assert.ok(s.persons.length >= 1);
    if (slug === 'jdg') {
      assert.equal(s.persons[0]!.role, 'WŁAŚCICIEL');
      assert.ok(p.name.includes(s.persons[0]!.full_name), `${p.name} names its owner`);
      assert.equal(idOf(s, 'KRS'), undefined);
    }
    for (const c of p.contacts) {
      if (c.type === 'phone' || c.type === 'fax') assert.match(c.value, /^\+48 (\d{3} \d{3} \d{3}|\d{2} \d{3} \d{2} \d{2})$/, c.value);
      else assert.match(c.value, /^[a-z0-9.-]+@[a-z0-9.-]+\.[a-z]{2,}$/, c.value);
    }
    for (const w of p.websites) assert.match(w, /^https:\/\/[a-z0-9.-]+\.[a-z]{2,}$/, w);

    const dateOf = (type: string) => p.dates.find((d) => d.type === type)?.date;
    const registration = dateOf('registration')!;
    const start = dateOf('activity_start')!;
    assert.ok(registration >= '1995-12-31' && registration < '2026-01-01', registration);
    assert.ok(start >= '1995-12-31' && start < '2026-01-01', start);
  }
  const share = (slug: string) => (forms.get(slug) ?? 0) / snapshots.length;
  assert.ok(share('jdg') > 0.66 && share('jdg') < 0.74, `JDG share ${share('jdg')}`);
  assert.ok(share('sp-z-oo') > 0.14 && share('sp-z-oo') < 0.2, `sp. z o.o. share ${share('sp-z-oo')}`);
  for (const slug of ['spolka-cywilna', 'fundacja', 'stowarzyszenie', 'spolka-komandytowa', 'spolka-jawna', 'sa'])
    assert.ok(forms.has(slug), slug);
  const withUnits = snapshots.filter((s) => s.profiles[0]!.units.length > 0).length / snapshots.length;
  assert.ok(withUnits > 0.03 && withUnits < 0.2, `local units in ${withUnits}`);
});

test('every PKD code of the word lists is a current subclass', () => {
  for (const trade of [...TRADES, NONPROFIT_TRADE, SPORTS_CLUB_TRADE, HOUSING_COOP_TRADE, FARM_COOP_TRADE]) {
    for (const code of trade.pkd2007) {
      const e = pkdEntry(code, 2007);
      assert.ok(e?.level === 'subclass' && e.valid_to === undefined, `${trade.key} 2007 ${code}`);
    }
    for (const code of trade.pkd2025) assert.equal(pkdEntry(code, 2025)?.level, 'subclass', `${trade.key} 2025 ${code}`);
  }
});

test('a day yields about 0.5% of the registry, each in its state on that day; others are unchanged', async () => {
  const source = createSyntheticSource({ seed: 9, size: 4000 });
  assert.deepEqual(await collect(source.snapshotsForDate('2026-01-01')), [], 'nothing changes on the epoch');
  assert.deepEqual(await collect(source.snapshotsForDate('2025-06-01')), [], 'nor before it');

  const day = '2026-05-20';
  const before = new Map((await collect(source.allSnapshots(addDays(day, -1)))).map((s) => [regonOf(s), s]));
  const after = new Map((await collect(source.allSnapshots(day))).map((s) => [regonOf(s), s]));
  const changed = await collect(source.snapshotsForDate(day));
  const changedBase = changed.filter((s) => after.has(regonOf(s)));
  const registered = changed.filter((s) => !after.has(regonOf(s)));
  assert.ok(changedBase.length >= 8 && changedBase.length <= 45, `${changedBase.length} of 4000 changed`);
  for (const s of changedBase) {
    assert.deepEqual(s, after.get(regonOf(s)), 'yielded in its state on the day');
    assert.notDeepEqual(s, before.get(regonOf(s)), 'and it did change');
  }
  const changedRegons = new Set(changed.map(regonOf));
  for (const [regon, s] of after) if (!changedRegons.has(regon)) assert.deepEqual(s, before.get(regon), `${regon} absent, so unchanged`);

  // New registrations: registered that day; four thousand companies register about one a day.
  for (const s of registered) {
    const registration = s.profiles[0]!.dates.find((d) => d.type === 'registration')?.date;
    const knownEarlier = s.profiles[0]!.dates.some((d) => d.type === 'registration' && d.date < day);
    assert.ok(registration === day || knownEarlier, `${registration} for a company first seen on ${day}`);
  }
  const registeredToday = await collect(createSyntheticSource({ seed: 9, size: 100_000 }).snapshotsForDate(day));
  const newOnes = registeredToday.filter((s) => s.profiles[0]!.dates.find((d) => d.type === 'registration')?.date === day);
  assert.ok(newOnes.length >= 25 && newOnes.length <= 35, `${newOnes.length} registrations in a 100,000-company registry`);
  assert.ok(newOnes.every((s) => ['aktywny', 'oczekuje na rozpoczęcie działalności'].includes(s.profiles[0]!.status)));
});

test('a month of a 20,000-company registry produces every one of the 29 event types, coherently', async () => {
  const source = createSyntheticSource({ seed: 1, size: 20_000 });
  const start = '2026-02-01';
  const known = new Map((await collect(source.allSnapshots(start, { includeRegistered: true }))).map((s) => [regonOf(s), s]));
  const seenTypes = new Map<EventType, number>();
  const deleted = new Set<string>();
  let yielded = 0;
  let withoutEvents = 0;
  let pendingStarts = 0;
  for (let d = 1; d <= 30; d++) {
    const date = addDays(start, d);
    for await (const next of source.snapshotsForDate(date)) {
      yielded++;
      const regon = regonOf(next);
      assert.ok(!deleted.has(regon), `${regon} changed after it was deleted`);
      const prev = known.get(regon);
      known.set(regon, next);
      if (next.profiles[0]!.status === 'wykreślony') deleted.add(regon);
      if (!prev) {
        assert.equal(
          next.profiles[0]!.dates.find((x) => x.type === 'registration')?.date,
          date,
          'a company first seen is registered that day',
        );
        continue;
      }
      const events = diffSnapshots(prev, next);
      if (events.length === 0) withoutEvents++;
      for (const e of events) {
        seenTypes.set(e.event_type, (seenTypes.get(e.event_type) ?? 0) + 1);
        if (e.event_type === 'COMPANY_RESUMPTION_DATE')
          assert.equal(prev.profiles[0]!.status, 'zawieszony', 'resumption only after suspension');
        if (e.event_type === 'COMPANY_SUSPENDED_DATE') assert.notEqual(prev.profiles[0]!.status, 'zawieszony');
        if (e.event_type === 'COMPANY_BANKRUPTCY_ENDED') assert.equal(prev.profiles[0]!.status, 'w upadłości');
        if (e.event_type === 'COMPANY_STATUS_CHANGED' && e.old_value === 'oczekuje na rozpoczęcie działalności') {
          assert.equal(e.new_value, 'aktywny');
          assert.equal(events.length, 1, 'a delayed start changes only the status');
          pendingStarts++;
        }
      }
    }
  }
  const missing = EVENT_TYPES.filter((t) => !seenTypes.has(t));
  assert.deepEqual(missing, [], `missing event types: ${missing.join(', ')}`);
  assert.equal(withoutEvents, 0, 'every company yielded has changed');
  assert.ok(pendingStarts > 0, 'sole traders registered with a future start date start');
  const perDay = yielded / 30 / 20_000;
  assert.ok(perDay > 0.003 && perDay < 0.008, `${(perDay * 100).toFixed(2)}% a day`);
  // Contacts and persons are common, insolvency rare.
  const count = (t: EventType) => seenTypes.get(t) ?? 0;
  assert.ok(count('COMPANY_PHONE_CHANGED') > 5 * count('COMPANY_BANKRUPTCY_STARTED'));
  assert.ok(count('COMPANY_PERSON_ADDED') > 5 * count('COMPANY_TAX_IDENTITY_CHANGED'));
});

// Generation speed is measured by bench/synthetic.ts (docs/benchmarks.md), never asserted here.
test('generation yields the whole registry and can be aborted', async () => {
  const source = createSyntheticSource({ seed: 2, size: 20_000 });
  let n = 0;
  for await (const _ of source.allSnapshots('2026-10-01')) n++;
  assert.equal(n, 20_000);

  const controller = new AbortController();
  let seen = 0;
  await assert.rejects(
    (async () => {
      for await (const _ of createSyntheticSource({ seed: 2, size: 200_000 }).allSnapshots('2026-03-01', { signal: controller.signal })) {
        if (++seen === 10) controller.abort();
      }
    })(),
    { name: 'AbortError' },
  );
  assert.ok(seen < 20_000);
});

test('any future date is a day: past the simulated horizon the registry stands still (no changes, its last state)', async () => {
  const source = createSyntheticSource({ seed: '7', size: 50 });
  const changes = async (date: string) => {
    let n = 0;
    for await (const _ of source.snapshotsForDate(date)) n++;
    return n;
  };
  assert.equal(await changes('2999-12-31'), 0);
  assert.equal(await changes('9999-12-31'), 0);
  const last: CompanySnapshot[] = [];
  for await (const s of source.allSnapshots('2125-12-07')) last.push(s);
  const later: CompanySnapshot[] = [];
  for await (const s of source.allSnapshots('9999-12-31')) later.push(s);
  assert.equal(later.length, 50);
  assert.deepEqual(later, last);
  assert.deepEqual(source.snapshotOf(3, '9999-12-31'), last[3]);
});
