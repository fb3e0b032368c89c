import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cities,
  findVoivodeship,
  legalFormByGusSymbol,
  legalFormBySlug,
  legalForms,
  legalFormSlugForLabel,
  pkdActivities,
  pkdEntry,
  pkdName,
  voivodeships,
} from './dictionaries.ts';

test('PKD 2025 subclasses are the default activity list', () => {
  const activities = pkdActivities();
  assert.ok(activities.length > 700, `only ${activities.length} subclasses`);
  assert.ok(activities.every((a) => a.level === 'subclass' && /^\d{4}[A-Z]$/.test(a.code)));
  assert.ok(activities.some((a) => a.code === '6210B'));
  assert.ok(!activities.some((a) => a.code === '6201Z'), '6201Z is PKD 2007 only');
});

test('PKD 2007 is a second list; withdrawn codes only on request', () => {
  const current = pkdActivities({ version: 2007 });
  const withWithdrawn = pkdActivities({ version: 2007, includeWithdrawn: true });
  assert.ok(current.some((a) => a.code === '6201Z'));
  assert.ok(withWithdrawn.length > current.length);
  assert.ok(!current.some((a) => a.code === '8531C'), '8531C (licea profilowane) was withdrawn in 2017');
  assert.ok(withWithdrawn.some((a) => a.code === '8531C'));
  // 8510Z was renamed in 2017: the current name wins however the list is ordered.
  assert.equal(pkdName('8510Z', 2007), 'PLACÓWKI WYCHOWANIA PRZEDSZKOLNEGO');
  const allLevels = pkdActivities({ level: 'all' });
  assert.deepEqual(new Set(allLevels.map((a) => a.level)), new Set(['section', 'division', 'group', 'class', 'subclass']));
});

test('pkdName accepts dotted codes and prefers PKD 2025', () => {
  const cases: Array<[string, 2007 | 2025 | undefined, string | null]> = [
    ['62.10.B', undefined, 'POZOSTAŁA DZIAŁALNOŚĆ W ZAKRESIE PROGRAMOWANIA'],
    ['6201Z', undefined, 'DZIAŁALNOŚĆ ZWIĄZANA Z OPROGRAMOWANIEM'],
    ['49.32.z', 2025, 'TRANSPORT DROGOWY PASAŻERSKI INNY NIŻ ROZKŁADOWY'],
    ['4932Z', 2007, 'DZIAŁALNOŚĆ TAKSÓWEK OSOBOWYCH'],
    ['6201Z', 2025, null],
    ['9999Z', undefined, null],
  ];
  for (const [code, version, expected] of cases) assert.equal(pkdName(code, version), expected, `${code} ${version}`);
  assert.equal(pkdEntry('62')?.level, 'division');
});

test('sixteen voivodeships with TERYT codes, lower-case names and slugs', () => {
  const list = voivodeships();
  assert.equal(list.length, 16);
  assert.deepEqual(
    list.find((v) => v.code === '14'),
    { code: '14', name: 'mazowieckie', slug: 'mazowieckie' },
  );
  assert.deepEqual(
    list.find((v) => v.code === '10'),
    { code: '10', name: 'łódzkie', slug: 'lodzkie' },
  );
  assert.equal(findVoivodeship('ŁÓDZKIE')?.code, '10');
  assert.equal(findVoivodeship('lodzkie')?.code, '10');
  assert.equal(findVoivodeship('województwo warmińsko-mazurskie')?.code, '28');
  assert.equal(findVoivodeship('24')?.name, 'śląskie');
  assert.equal(findVoivodeship('bawaria'), null);
});

test('legal forms: slugs, labels and GUS symbols', () => {
  const slugs = legalForms().map((f) => f.slug);
  for (const slug of [
    'sp-z-oo',
    'sa',
    'spolka-jawna',
    'spolka-komandytowa',
    'spolka-komandytowo-akcyjna',
    'spolka-partnerska',
    'psa',
    'spolka-cywilna',
    'jdg',
    'spoldzielnia',
    'fundacja',
    'stowarzyszenie',
    'przedsiebiorstwo-panstwowe',
  ]) {
    assert.ok(slugs.includes(slug), slug);
  }
  assert.equal(new Set(slugs).size, slugs.length);
  const spzoo = legalFormBySlug('sp-z-oo');
  assert.equal(spzoo?.label, 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ');
  assert.equal(spzoo?.gus_symbol, '117');
  assert.equal(spzoo?.basic_form, 'OSOBA PRAWNA');
  assert.equal(legalFormBySlug('jdg')?.basic_form_symbol, '9');
  assert.equal(legalFormBySlug('nope'), null);
  assert.equal(legalFormByGusSymbol('19')?.slug, 'spolka-cywilna');
  assert.equal(legalFormByGusSymbol('116')?.slug, 'sa');
});

test('legalFormSlugForLabel ignores case, diacritics and punctuation', () => {
  const cases: Array<[string, string | null]> = [
    ['SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', 'sp-z-oo'],
    ['SPOLKA Z OGRANICZONA ODPOWIEDZIALNOSCIA', 'sp-z-oo'],
    ['sp. z o.o.', 'sp-z-oo'],
    ['SPÓŁKI Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', 'sp-z-oo'],
    ['Spółka Akcyjna', 'sa'],
    ['S.A.', 'sa'],
    ['PROSTA SPÓŁKA AKCYJNA', 'psa'],
    ['SPÓŁKI KOMANDYTOWO - AKCYJNE', 'spolka-komandytowo-akcyjna'],
    ['spółka komandytowa', 'spolka-komandytowa'],
    ['SPÓŁDZIELNIA', 'spoldzielnia'],
    ['FUNDACJA', 'fundacja'],
    ['Stowarzyszenie', 'stowarzyszenie'],
    ['OSOBY FIZYCZNE PROWADZĄCE DZIAŁALNOŚĆ GOSPODARCZĄ', 'jdg'],
    ['jednoosobowa działalność gospodarcza', 'jdg'],
    ['PRZEDSIĘBIORSTWA PAŃSTWOWE', 'przedsiebiorstwo-panstwowe'],
    ['spolka-jawna', 'spolka-jawna'],
    ['SPÓŁKA', null],
    ['', null],
  ];
  for (const [label, slug] of cases) assert.equal(legalFormSlugForLabel(label), slug, label);
});

test('cities: real towns with a known voivodeship and a postal range', () => {
  const list = cities();
  assert.ok(list.length >= 300, `only ${list.length} cities`);
  const names = new Set(voivodeships().map((v) => v.name));
  for (const c of list) {
    assert.ok(names.has(c.voivodeship), `${c.name}: ${c.voivodeship}`);
    assert.match(c.postal_from, /^\d{2}-\d{3}$/);
    assert.match(c.postal_to, /^\d{2}-\d{3}$/);
    assert.ok(c.postal_from <= c.postal_to, c.name);
  }
  const warszawa = list.find((c) => c.name === 'Warszawa');
  assert.deepEqual([warszawa?.voivodeship, warszawa?.postal_from, warszawa?.postal_to], ['mazowieckie', '00-001', '04-999']);
  assert.equal(list.find((c) => c.name === 'Kraków')?.voivodeship, 'małopolskie');
  for (const v of names)
    assert.ok(
      list.some((c) => c.voivodeship === v),
      `no city in ${v}`,
    );
});

test('dictionaries are frozen', () => {
  assert.throws(() => {
    (voivodeships() as unknown as object[]).push({});
  }, TypeError);
  assert.throws(() => {
    (legalFormBySlug('sa') as { label: string }).label = 'x';
  }, TypeError);
});
