import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compoundForms, MAX_COMPOUND_FORMS } from './compounds.ts';
import type { MatchRow } from './match-index.ts';
import { MatchIndexBuilder } from './match-index-builder.ts';
import { matchQuery } from './matcher.ts';
import { nameTokens } from './normalize.ts';
import { prepareQuery, type MatchQuery } from './scoring.ts';

describe('compoundForms', () => {
  const vocabulary = (...words: string[]) => {
    const set = new Set(words);
    return (w: string) => set.has(w);
  };

  test('joins two neighbouring words the registry knows as one', () => {
    assert.deepEqual(compoundForms(['auto', 'max', 'serwis'], vocabulary('automax', 'serwis')), [
      ['auto', 'max', 'serwis'],
      ['automax', 'serwis'],
    ]);
  });

  test('splits a word into two halves the registry knows', () => {
    assert.deepEqual(compoundForms(['automax'], vocabulary('auto', 'max')), [['automax'], ['auto', 'max']]);
  });

  test('reads nothing else when the registry knows neither form', () => {
    assert.deepEqual(compoundForms(['auto', 'max'], vocabulary('auto', 'max')), [['auto', 'max']]);
    assert.deepEqual(compoundForms(['automax'], vocabulary('auto')), [['automax']]);
    assert.deepEqual(compoundForms([], vocabulary('a')), [[]]);
  });

  test('never splits off fewer than three letters', () => {
    assert.deepEqual(compoundForms(['pltrans'], vocabulary('pl', 'trans', 'pltran', 's')), [['pltrans']]);
  });

  test('reads at most MAX_COMPOUND_FORMS forms besides the name as written', () => {
    const forms = compoundForms(['abcabcabcabc'], () => true);
    assert.equal(forms.length, MAX_COMPOUND_FORMS + 1);
    assert.deepEqual(forms[0], ['abcabcabcabc']);
    assert.equal(new Set(forms.map((f) => f.join(' '))).size, forms.length);
  });
});

describe('matching a name written with or without its hyphen or space', () => {
  let nextId = 0;
  const row = (name: string, city: string, postal: number): MatchRow => ({
    id: ++nextId,
    status: 'ACTIVE',
    tokens: nameTokens(name),
    city,
    street: null,
    postal,
    identifierKeys: [],
  });
  // Filler companies give the words their usual weights; the compound names appear once each.
  const rows: MatchRow[] = [
    row('„AUTO-MAX" Sp. z o.o.', 'warszawa', 950),
    row('BUDMAR SPÓŁKA JAWNA', 'krakow', 31_000),
    row('KOWALSKI-NOWAK TRANSPORT S.C.', 'lodz', 90_001),
    row('MAX SERWIS Sp. z o.o.', 'gdansk', 80_001),
    row('AUTO KOMIS ZBYSZKO', 'poznan', 60_001),
  ];
  for (let i = 0; i < 300; i++)
    rows.push(row(`Firma Handlowa Numer ${['Alfa', 'Beta', 'Gamma', 'Delta'][i % 4]} ${i}`, 'radom', 26_600 + i));

  async function best(q: MatchQuery) {
    const b = new MatchIndexBuilder();
    for (const r of rows) b.add(r);
    const index = await b.build();
    const outcome = matchQuery(index, prepareQuery(q));
    const top = outcome.candidates[0];
    return { id: top?.candidate.id, score: top?.score, features: top?.features, bet: outcome.match === 0 };
  }

  test('`Automax` finds `AUTO-MAX` as fully as `Auto-Max` does, and the service bets on it', async () => {
    const joined = await best({ name: 'Automax' });
    const written = await best({ name: 'Auto-Max' });
    assert.deepEqual(joined, { id: 1, score: written.score, features: ['name'], bet: true });
    assert.equal(joined.score, 1);
  });

  test('`Bud-Mar` and `Bud Mar` find `BUDMAR`', async () => {
    for (const name of ['Bud-Mar sp.j.', 'bud mar'])
      assert.deepEqual(await best({ name, city: 'Kraków' }), { id: 2, score: 1, features: ['name', 'city'], bet: true });
  });

  test('a joined pair inside a longer name: `KowalskiNowak Transport`', async () => {
    assert.deepEqual(await best({ name: 'KowalskiNowak Transport' }), { id: 3, score: 1, features: ['name'], bet: true });
  });

  test('the halves of a split are not read as any company holding one of them', async () => {
    // `automaxserwis` splits into nothing the registry knows whole; `auto`/`max` alone are other companies.
    const r = await best({ name: 'Automaxserwis' });
    assert.equal(r.bet, false);
  });
});
