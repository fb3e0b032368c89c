import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { allowedTypos, cityKey, editDistanceWithin, nameTokens, postalKey, streetKey } from './normalize.ts';

describe('nameTokens', () => {
  test('ordinary words a letter away from a legal-form word stay; misspelt legal forms beside one go', () => {
    assert.deepEqual(nameTokens('POLKA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ'), ['polka']);
    assert.deepEqual(nameTokens('Polka sp. z o.o.'), ['polka']);
    assert.deepEqual(nameTokens('Jasna Dawna S.A.'), ['jasna', 'dawna']);
    assert.deepEqual(nameTokens('Jasna Góra'), ['jasna', 'gora']);
    assert.deepEqual(nameTokens('Klub Partnerski'), ['klub', 'partnerski']);
    assert.deepEqual(nameTokens('Kowalski spółka z ograniczoną odpowiedzalnością'), ['kowalski']);
    assert.deepEqual(nameTokens('Kowalski spółka z ogranicona odpowiedzialnością'), ['kowalski']);
  });
  const same: [string, string][] = [
    ['ORLEN SPÓŁKA AKCYJNA', 'orlen s.a.'],
    ['Orlen S.A.', 'ORLEN SA'],
    ['KOWALSKI SP. Z O.O.', 'Kowalski spółka z o.o.'],
    ['KOWALSKI SP. Z O.O.', 'kowalski spółka z ograniczoną odpowiedzialnością'],
    ['KOWALSKI SP. Z O.O.', 'Kowalski Sp.z o. o.'],
    ['KOWALSKI SP. Z O.O.', 'kowalski sp z oo'],
    ['KOWALSKI SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', 'Kowalski spółka z odpowiedzialnością ograniczoną'],
    ['KOWALSKI SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', 'Kowalski spolka z ograniczona odpowiedzialnoscia'],
    ['KOWALSKI SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', 'Kowalski spółka z ograniczoną odpowiedzalnością'],
    ['NOWAK I SYN SPÓŁKA JAWNA', 'Nowak i Syn sp.j.'],
    ['NOWAK I SYN SPÓŁKA JAWNA', 'nowak & syn sp. j.'],
    ['ALFA SPÓŁKA KOMANDYTOWA', 'Alfa sp.k.'],
    ['ALFA SP. Z O.O. SP.K.', 'alfa spółka z o.o. spółka komandytowa'],
    ['BETA SPÓŁKA CYWILNA', 'Beta s.c.'],
    ['GAMMA PROSTA SPÓŁKA AKCYJNA', 'Gamma P.S.A.'],
    ['DELTA SP. Z O.O. W LIKWIDACJI', 'Delta sp. z o.o.'],
    ['Łódź Trans', 'LODZ TRANS'],
    ['„AUTO-MAX" PPHU', 'auto max p.p.h.u.'],
    ['P.H.U. "MAX"', 'PHU Max'],
    ['P H U MAX', 'phu max'],
    ['BUDREX SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ SPÓŁKA KOMANDYTOWA', 'Budrex sp. z o.o. sp. kom.'],
    ['TRANSGAZ SPÓŁKA AKCYJNA', 'Transgaz Sp. Akc.'],
    ['ZBYCHPOL SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', 'Zbychpol sp. z ogr. odp.'],
    ['ZBYCHPOL SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', 'Zbychpol sp. z o.o. w organizacji'],
    ['KOMBUD SP. Z O.O. W LIKWIDACJI', 'Kombud sp. z o.o. w likw.'],
    ['ELEKTROMAX SPÓŁKA CYWILNA', 'Elektromax spółka cyw.'],
    ['NOWAK SPÓŁKA JAWNA', 'Nowak s.j.'],
    ['PPHU AUTO-MAX', 'Przedsiębiorstwo Produkcyjno-Handlowo-Usługowe „Auto-Max"'],
    ['PPHU AUTO-MAX', 'Przeds. Prod.-Handl.-Usł. Auto Max'],
    ['FHU KOWALSKI', 'Firma Handlowo-Usługowa Kowalski'],
    ['ZUH NOWAK', 'Zakład Usługowo-Handlowy Nowak'],
    ['PW ALFA', 'PRZEDSIĘBIORSTWO WIELOBRANŻOWE ALFA'],
    ['PRZEDSIĘBIORSTWO BUDOWLANE NOWAK', 'Przeds. Budowlane Nowak'],
  ];
  for (const [a, b] of same) {
    test(`${a} = ${b}`, () => assert.deepEqual(nameTokens(b), nameTokens(a)));
  }

  const table: [string, string[]][] = [
    ['ORLEN SPÓŁKA AKCYJNA', ['orlen']],
    ['Zakłady Mięsne „Koło" Sp. z o.o.', ['zaklady', 'miesne', 'kolo']],
    ['Jan Kowalski', ['jan', 'kowalski']],
    ['Hotel dla psa Burek', ['hotel', 'dla', 'psa', 'burek']],
    ['sp. z o.o.', []],
    ['', []],
    ['2000 Plus', ['2000', 'plus']],
    // Short words that only look like legal forms' abbreviations stay.
    ['Kom Bud', ['kom', 'bud']],
    ['Akc Pol Sklep', ['akc', 'pol', 'sklep']],
    // A noun of trade is the name itself, not a business form: only adjectives make one.
    ['Firma Transport Kowalski', ['firma', 'transport', 'kowalski']],
    ['Przedsiębiorstwo Handel Usługi Nowak', ['przedsiebiorstwo', 'handel', 'uslugi', 'nowak']],
    ['Firma Handlowa Kowalski', ['fh', 'kowalski']],
  ];
  for (const [input, tokens] of table)
    test(`${JSON.stringify(input)} → ${tokens.join(' ')}`, () => assert.deepEqual(nameTokens(input), tokens));

  test('tokens are lower-case a-z0-9 words; a single character only when a digit', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (s) => {
        for (const t of nameTokens(s)) assert.match(t, /^(?:[a-z0-9]{2,}|[0-9])$/);
      }),
    );
  });

  test('case and word order do not matter', () => {
    // A word that reads as a legal form (`pŚĄ` folds to `psa`, prosta spółka akcyjna) is dropped
    // when it ends a name and kept elsewhere, by design; the property is about the other words.
    const plain = (w: string) => nameTokens(`firma ${w}`).length === 2 && nameTokens(`${w} firma`).length === 2;
    const word = fc.stringMatching(/^[A-Za-zĄĆĘŁŃÓŚŹŻąćęłńóśźż]{3,10}$/).filter(plain);
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 5 }), (words) => {
        const a = nameTokens(words.join(' ')).sort();
        const b = nameTokens([...words].reverse().join(' ').toUpperCase()).sort();
        assert.deepEqual(b, a);
      }),
    );
  });
});

describe('address keys', () => {
  test('cityKey', () => {
    assert.equal(cityKey('Łódź'), 'lodz');
    assert.equal(cityKey('KĘDZIERZYN-KOŹLE'), 'kedzierzyn kozle');
    assert.equal(cityKey('  '), null);
    assert.equal(cityKey(null), null);
  });
  test('streetKey drops the street type and numbers', () => {
    assert.equal(streetKey('ul. Jana Pawła II 12/4'), 'jana pawla ii');
    assert.equal(streetKey('al. Armii Krajowej'), 'armii krajowej');
    assert.equal(streetKey('Armii Krajowej 5'), 'armii krajowej');
    assert.equal(streetKey('12'), null);
  });
  test('postalKey', () => {
    assert.equal(postalKey('00-950'), 950);
    assert.equal(postalKey('00950'), 950);
    assert.equal(postalKey('00 95'), null);
    assert.equal(postalKey(undefined), null);
  });
});

describe('editDistanceWithin', () => {
  const table: [string, string, number, number][] = [
    ['kowalski', 'kowalski', 2, 0],
    ['kowalski', 'kowlaski', 2, 1],
    ['kowalski', 'kowalsky', 2, 1],
    ['kowalski', 'kowalsk', 2, 1],
    ['kowalski', 'kowalskii', 2, 1],
    ['kowalski', 'nowalsky', 2, 2],
    ['kowalski', 'nowak', 2, 3],
    ['abc', 'xyz', 1, 2],
  ];
  for (const [a, b, max, d] of table) test(`${a} ~ ${b} (max ${max}) = ${d}`, () => assert.equal(editDistanceWithin(a, b, max), d));

  test('symmetric, zero only for equal strings, never over max + 1', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), fc.integer({ min: 0, max: 3 }), (a, b, max) => {
        const d = editDistanceWithin(a, b, max);
        assert.equal(d, editDistanceWithin(b, a, max));
        assert.equal(d === 0, a === b);
        assert.ok(d <= max + 1);
      }),
    );
  });

  test('one edit is distance 1 when allowed', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z]{2,12}$/), fc.nat(), fc.constantFrom('a', 'q'), (s, at, c) => {
        const i = at % s.length;
        const deleted = s.slice(0, i) + s.slice(i + 1);
        assert.ok(editDistanceWithin(s, deleted, 1) <= 1);
        assert.ok(editDistanceWithin(s, s.slice(0, i) + c + s.slice(i), 1) <= 1);
      }),
    );
  });

  test('allowedTypos grows with the word', () => {
    assert.deepEqual([2, 3, 4, 7, 8, 20].map(allowedTypos), [0, 0, 1, 1, 2, 2]);
  });
});
