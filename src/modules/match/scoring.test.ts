import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { MatchCandidate } from './match-index.ts';
import { MatchIndexBuilder } from './match-index-builder.ts';
import { matchQuery } from './matcher.ts';
import { nameTokens } from './normalize.ts';
import {
  chooseMatch,
  MATCH_MARGIN,
  MATCH_THRESHOLD,
  nameSimilarity,
  prepareQuery,
  scoreCandidate,
  wordSimilarity,
  type ScoredCandidate,
} from './scoring.ts';

const flat = () => 1;
const company = (name: string, over: Partial<MatchCandidate> = {}): MatchCandidate => ({
  id: 1,
  status: 'ACTIVE',
  tokens: nameTokens(name),
  city: 'lodz',
  street: 'piotrkowska',
  postal: 90001,
  ...over,
});

describe('wordSimilarity', () => {
  const table: [string, string, number][] = [
    ['kowalski', 'kowalski', 1],
    ['kowalski', 'kowlaski', 0.85],
    ['kowalski', 'kowalsky', 0.85],
    ['kowalski', 'nowalsky', 0.7],
    ['kowalski', 'nowak', 0],
    ['max', 'mix', 0],
    ['orlen', 'orlan', 0.85],
  ];
  for (const [a, b, s] of table) test(`${a} ~ ${b} = ${s}`, () => assert.equal(Number(wordSimilarity(a, b).toFixed(2)), s));
});

describe('nameSimilarity', () => {
  test('equal bags score 1 in any order; nothing in common scores 0', () => {
    assert.equal(nameSimilarity(['a1', 'b2', 'c3'], ['c3', 'a1', 'b2'], flat), 1);
    assert.equal(nameSimilarity(['a1'], ['b2'], flat), 0);
    assert.equal(nameSimilarity([], ['b2'], flat), 0);
  });
  test('a missing word costs its weight: rare words matter more', () => {
    const weight = (w: string) => (w === 'rare' ? 10 : 1);
    assert.ok(nameSimilarity(['rare', 'common'], ['common'], weight) < nameSimilarity(['rare', 'common'], ['rare'], weight));
  });
  test('in [0, 1]; 1 only for the same bag of words', () => {
    const words = fc.array(fc.constantFrom('alfa', 'beta', 'gamma', 'delta', 'betta', 'alpha', 'omega'), { maxLength: 5 });
    fc.assert(
      fc.property(words, words, (a, b) => {
        const s = nameSimilarity(a, b, flat);
        assert.ok(s >= 0 && s <= 1);
        if (s === 1) assert.deepEqual([...a].sort(), [...b].sort());
      }),
    );
  });
});

describe('scoreCandidate', () => {
  const q = (over: Record<string, string>) => prepareQuery({ name: 'Zakłady Mięsne Koło sp. z o.o.', ...over });
  const cases: [string, Record<string, string>, Partial<MatchCandidate>, number, string[]][] = [
    ['same name, no address given', {}, {}, 1, ['name']],
    ['same name and city', { city: 'ŁÓDŹ' }, {}, 1, ['name', 'city']],
    ['same name, other city', { city: 'Kraków' }, {}, 0.85, ['name']],
    ['same name, city unknown to the registry', { city: 'Kraków' }, { city: null }, 0.925, ['name']],
    ['same name, city agrees, postal code not', { city: 'Lodz', postal_code: '90-002' }, {}, 0.925, ['name', 'city']],
    [
      'every address part agrees',
      { city: 'Lodz', postal_code: '90001', street: 'ul. Piotrkowska 1' },
      {},
      1,
      ['name', 'city', 'postal_code', 'street'],
    ],
    ['deleted', {}, { status: 'DELETED' }, 0.97, ['name']],
    ['suspended', {}, { status: 'SUSPENDED' }, 0.99, ['name']],
  ];
  for (const [label, over, company_, score, features] of cases) {
    test(label, () => {
      const r = scoreCandidate(q(over), company('ZAKŁADY MIĘSNE „KOŁO" SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', company_), flat, false);
      assert.equal(r.score, score);
      assert.deepEqual(r.features, features);
    });
  }
  test('an identifier that agrees scores 1 whatever the name', () => {
    const r = scoreCandidate(prepareQuery({ name: 'Something else' }), company('ORLEN'), flat, true);
    assert.equal(r.score, 1);
    assert.deepEqual(r.features, ['identifier']);
  });
  test('agreement of an address part never lowers the score', () => {
    fc.assert(
      fc.property(fc.constantFrom('Łódź', 'Kraków'), fc.constantFrom('90-001', '30-001'), (city, postal) => {
        const base = scoreCandidate(q({ city }), company('Zakłady Mięsne Koło'), flat, false).score;
        const more = scoreCandidate(q({ city, postal_code: postal }), company('Zakłady Mięsne Koło'), flat, false).score;
        if (postal === '90-001') assert.ok(more >= base);
        else assert.ok(more <= base);
      }),
    );
  });
});

describe('chooseMatch', () => {
  const r = (score: number, identifier = false): ScoredCandidate => ({
    candidate: company('x'),
    score,
    nameScore: score,
    identifier,
    features: [],
  });
  const table: [string, ScoredCandidate[], number][] = [
    ['none', [], -1],
    ['one good', [r(0.9)], 0],
    ['one weak', [r(MATCH_THRESHOLD - 0.01)], -1],
    ['a clear lead', [r(1), r(1 - MATCH_MARGIN)], 0],
    ['a tie', [r(1), r(1 - MATCH_MARGIN / 2)], -1],
    // Exactly the margin, in the thousandths scores come in: 0.95 - 0.9 is 0.0499… in floats.
    ['a lead of exactly the margin: 0.95 over 0.90', [r(0.95), r(0.9)], 0],
    ['a lead of exactly the margin: 0.85 over 0.80', [r(0.85), r(0.8)], 0],
    ['a lead a thousandth short of it', [r(0.95), r(0.901)], -1],
    ['the identified one, wherever it ranks', [r(1), r(0.5, true)], 1],
    ['two identified ones disagree', [r(1, true), r(1, true)], -1],
  ];
  for (const [label, ranked, expected] of table) test(label, () => assert.equal(chooseMatch(ranked), expected));
});

describe('matchQuery', () => {
  test('at most one match, at most five candidates, best first', async () => {
    const b = new MatchIndexBuilder();
    const names = ['Alfa Beta', 'Alfa Gamma', 'Alfa Delta', 'Alfa Beta Gamma', 'Alfa', 'Alfa Omega', 'Alfa Beta', 'Beta Gamma'];
    names.forEach((name, i) =>
      b.add({
        id: i + 1,
        status: 'ACTIVE',
        tokens: nameTokens(name),
        city: i === 6 ? 'lodz' : 'krakow',
        street: null,
        postal: null,
        identifierKeys: [10_000_000_000 + i],
      }),
    );
    const index = await b.build();
    const word = fc.constantFrom('alfa', 'beta', 'gamma', 'delta', 'omega', 'alpha', 'btea', 'zeta');
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 4 }), fc.constantFrom(undefined, 'Łódź', 'Kraków'), (words, city) => {
        const o = matchQuery(index, prepareQuery({ name: words.join(' '), city }));
        assert.ok(o.candidates.length <= 5);
        assert.ok(o.match < o.candidates.length);
        for (let i = 1; i < o.candidates.length; i++) assert.ok(o.candidates[i - 1]!.score >= o.candidates[i]!.score);
      }),
    );
    // Two companies named `Alfa Beta`: the city decides.
    const lodz = matchQuery(index, prepareQuery({ name: 'beta alfa', city: 'Lodz' }));
    assert.equal(lodz.candidates[lodz.match]?.candidate.id, 7);
    assert.equal(matchQuery(index, prepareQuery({ name: 'beta alfa' })).match, -1);
    // An identifier wins outright.
    const byNip = matchQuery(index, prepareQuery({ name: 'Alfa Beta', nip: '0000000000' }));
    assert.equal(byNip.match === -1 || byNip.candidates[byNip.match]!.identifier, true);
  });
});
