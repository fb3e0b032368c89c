import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { foldText, foldTextByDefinition, normalizeActivityCode, normalizePostalCode, stripLegalFormWords } from './text.ts';

describe('foldText', () => {
  const table: Array<[string, string]> = [
    ['ZAŻÓŁĆ GĘŚLĄ JAŹŃ', 'zazolc gesla jazn'],
    ['zażółć gęślą jaźń', 'zazolc gesla jazn'],
    ['  Łódź   Wschód\t\n', 'lodz wschod'],
    ['ŁÓDZKIE', 'lodzkie'],
    ['MAZOWIECKIE', 'mazowieckie'],
    ['Śląskie', 'slaskie'],
    ['Kraków', 'krakow'],
    ['Zielona Góra', 'zielona gora'],
    ['Bielsko-Biała', 'bielsko-biala'],
    ['FUNDACJA WIELKA ORKIESTRA ŚWIĄTECZNEJ POMOCY', 'fundacja wielka orkiestra swiatecznej pomocy'],
    ['Müller Café', 'muller cafe'],
    ['plain ascii', 'plain ascii'],
    ['', ''],
    ['   ', ''],
  ];
  for (const [input, expected] of table) {
    it(`${JSON.stringify(input)} -> ${JSON.stringify(expected)}`, () => assert.equal(foldText(input), expected));
  }

  it('gives what its definition gives, for any text (the table path and the fallback alike)', () => {
    // Units from every range that matters: ASCII, Latin-1 and Latin Extended (the table), the
    // whitespace of those ranges and beyond it, combining marks, Greek final sigma, CJK, lone
    // surrogates, and letters whose lower case is two characters (İ).
    const unit = fc.oneof(
      fc.integer({ min: 0, max: 0x24f }).map((c) => String.fromCharCode(c)),
      fc.constantFrom(
        ' ',
        '\t',
        '\n',
        '\u00a0',
        '\u1680',
        '\u2003',
        '\u3000',
        '\ufeff',
        '\u0301',
        '\u0328',
        'Σ',
        'ς',
        '漢',
        '\ud800',
        'İ',
        'ẞ',
        'ǅ',
      ),
      fc.constantFrom(...'aąćęłńóśźżAĄĆĘŁŃÓŚŹŻ '),
    );
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 40 }), (s) => foldText(s) === foldTextByDefinition(s)),
      { numRuns: 5000 },
    );
    for (let c = 0; c < 0x250; c++) {
      const s = ` A${String.fromCharCode(c)}b ${String.fromCharCode(c)} `;
      assert.equal(foldText(s), foldTextByDefinition(s), `U+${c.toString(16)}`);
    }
  });

  it('is idempotent and leaves no Polish letters or double spaces', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'aąbcćeęlłnńoóśszźżAĄĆĘŁŃÓŚŹŻ \t') }), (s) => {
        const folded = foldText(s);
        return foldText(folded) === folded && !/[ąćęłńóśźż]|\s{2}|[A-Z]/.test(folded) && folded === folded.trim();
      }),
    );
  });
});

describe('normalizePostalCode', () => {
  for (const [input, expected] of [
    ['00-950', '00950'],
    ['00950', '00950'],
    [' 09-411 ', '09411'],
    ['09 411', '09411'],
  ]) {
    it(`${input} -> ${expected}`, () => assert.equal(normalizePostalCode(input), expected));
  }
});

describe('normalizeActivityCode', () => {
  for (const [input, expected] of [
    ['62.01.Z', '6201Z'],
    ['62.01.z', '6201Z'],
    ['6201Z', '6201Z'],
    [' 62 01 z ', '6201Z'],
    ['19.20.Z', '1920Z'],
  ]) {
    it(`${input} -> ${expected}`, () => assert.equal(normalizeActivityCode(input), expected));
  }
});

describe('stripLegalFormWords', () => {
  const table: Array<[string, string]> = [
    ['orlen spolka akcyjna', 'orlen'],
    ['orlen s.a.', 'orlen'],
    ['orlen s.a', 'orlen'],
    ['orlen sa', 'orlen'],
    ['easysolar spolka z ograniczona odpowiedzialnoscia', 'easysolar'],
    ['easysolar sp. z o.o.', 'easysolar'],
    ['easysolar sp.z o.o.', 'easysolar'],
    ['easysolar sp. z o. o.', 'easysolar'],
    ['easysolar sp z oo', 'easysolar'],
    ['easysolar spolka z o.o.', 'easysolar'],
    ['"swlex" sp. z o.o.', '"swlex"'],
    ['abc, sp. z o.o.', 'abc'],
    ['kowalski i nowak spolka jawna', 'kowalski i nowak'],
    ['kowalski i nowak sp. j.', 'kowalski i nowak'],
    ['kowalski i nowak sp.j.', 'kowalski i nowak'],
    ['alfa spolka komandytowa', 'alfa'],
    ['alfa sp. k.', 'alfa'],
    ['alfa sp.k.', 'alfa'],
    ['alfa spolka komandytowo-akcyjna', 'alfa'],
    ['alfa sp.k.a.', 'alfa'],
    ['alfa s.k.a.', 'alfa'],
    ['beta s.c.', 'beta'],
    ['beta spolka cywilna', 'beta'],
    ['gamma prosta spolka akcyjna', 'gamma'],
    ['gamma psa', 'gamma'],
    ['gamma p.s.a.', 'gamma'],
    ['delta spolka partnerska', 'delta'],
    ['abc sp. z o.o. w likwidacji', 'abc'],
    ['abc spolka akcyjna w upadlosci', 'abc'],
    ['abc s.a. w upadlosci ukladowej', 'abc'],
    ['abc sa w likwidacji', 'abc'],
    ['abc sp. z o.o. w restrukturyzacji', 'abc'],
    ['abc sp. z o.o. sp. k.', 'abc'],
    // Ordinary words that look like abbreviations survive when they are not the trailing legal form.
    ['hotel dla psa burek', 'hotel dla psa burek'],
    ['sa lux okna', 'sa lux okna'],
    ['spolem', 'spolem'],
    ['spark sa', 'spark'],
    ['sarna', 'sarna'],
    ['fundacja wielka orkiestra swiatecznej pomocy', 'fundacja wielka orkiestra swiatecznej pomocy'],
    ['', ''],
  ];
  for (const [input, expected] of table) {
    it(`${JSON.stringify(input)} -> ${JSON.stringify(expected)}`, () => assert.equal(stripLegalFormWords(input), expected));
  }

  it('works on folded registry names', () => {
    assert.equal(stripLegalFormWords(foldText('ORLEN SPÓŁKA AKCYJNA')), 'orlen');
    assert.equal(stripLegalFormWords(foldText('EASYSOLAR SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ')), 'easysolar');
    assert.equal(stripLegalFormWords(foldText('SPÓŁDZIELNIA MIESZKANIOWA "ZGODA" W LIKWIDACJI')), 'spoldzielnia mieszkaniowa "zgoda"');
  });
});
