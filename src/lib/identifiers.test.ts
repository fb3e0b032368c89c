import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  detectIdentifierType,
  identifierKey,
  isValidNip,
  isValidRegon14,
  isValidRegon9,
  nipCheckDigit,
  normalizeKrs,
  parseIdentifier,
  regon14CheckDigit,
  regon9CheckDigit,
  storedIdentifierKey,
} from './identifiers.ts';

// Real (KRS, NIP, REGON) triples from the KRS extracts in /work/shared/fixtures/krs. KRS prints the
// REGON as 14 digits padded with zeros; the REGON9 is its first nine digits.
const KRS_EXTRACT_TRIPLES = [
  { krs: '0000028860', nip: '7740001454', regon9: '610188201' }, // ORLEN S.A.
  { krs: '0000121862', nip: '5260202393', regon9: '002003764' },
  { krs: '0000405063', nip: '9721237323', regon9: '301991466' },
  { krs: '0000413516', nip: '9721237317', regon9: '302046830' },
  { krs: '0001268296', nip: '9452336418', regon9: '545772924' },
  { krs: '0000181328', nip: '6581844658', regon9: '292841279' },
  { krs: '0000440028', nip: '6981835930', regon9: '302278641' },
] as const;

// REGON14 of local units from BIR reports (fixtures/bir).
const REAL_REGON14 = ['27659249800038', '27659249800045', '01034470800689', '29883786011481'];

describe('NIP', () => {
  for (const { nip } of KRS_EXTRACT_TRIPLES) {
    it(`accepts the real NIP ${nip}`, () => {
      assert.equal(isValidNip(nip), true);
      assert.deepEqual(parseIdentifier('NIP', nip), { ok: true, value: nip });
    });
  }

  const formatted: Array<[string, string]> = [
    ['526-104-08-28', '5261040828'],
    ['526 104 08 28', '5261040828'],
    ['PL5261040828', '5261040828'],
    ['pl 5261040828', '5261040828'],
    ['Pl 526-10-40-828', '5261040828'],
    ['  7740001454  ', '7740001454'],
    ['774\u00a0000\u00a014\u00a054', '7740001454'],
  ];
  for (const [raw, expected] of formatted) {
    it(`normalises ${JSON.stringify(raw)}`, () => {
      assert.deepEqual(parseIdentifier('NIP', raw), { ok: true, value: expected });
    });
  }

  const invalid = [
    '5261040829', // wrong check digit
    '526104082', // 9 digits
    '52610408281', // 11 digits
    '0099112233', // BIR test-environment placeholder with a bad checksum
    '0000000000',
    '',
    'PL',
    'DE5261040828',
    '5261O40828', // letter O
    '5261.040.828',
  ];
  for (const raw of invalid) {
    it(`rejects ${JSON.stringify(raw)} with a message naming NIP`, () => {
      assert.deepEqual(parseIdentifier('NIP', raw), { ok: false, error: 'The NIP must be 10 digits with a valid checksum.' });
    });
  }

  it('has no valid NIP whose first nine digits give a checksum of 10', () => {
    let prefix = '';
    for (let n = 100000000; n < 100001000; n++) {
      if (nipCheckDigit(String(n)) === null) {
        prefix = String(n);
        break;
      }
    }
    assert.notEqual(prefix, '');
    for (let d = 0; d <= 9; d++) assert.equal(isValidNip(prefix + d), false);
  });
});

describe('REGON', () => {
  for (const { regon9 } of KRS_EXTRACT_TRIPLES) {
    it(`accepts the real REGON9 ${regon9}`, () => {
      assert.equal(isValidRegon9(regon9), true);
      assert.deepEqual(parseIdentifier('REGON9', regon9), { ok: true, value: regon9 });
    });
  }
  for (const regon14 of REAL_REGON14) {
    it(`accepts the real REGON14 ${regon14}`, () => assert.equal(isValidRegon14(regon14), true));
  }

  it('counts a checksum of 10 as 0', () => {
    let found = '';
    for (let n = 10000000; n < 10010000; n++) {
      const s = String(n);
      let sum = 0;
      [8, 9, 2, 3, 4, 5, 6, 7].forEach((w, i) => {
        sum += w * Number(s[i]);
      });
      if (sum % 11 === 10) {
        found = s;
        break;
      }
    }
    assert.notEqual(found, '');
    assert.equal(regon9CheckDigit(found), 0);
    assert.equal(isValidRegon9(found + '0'), true);
  });

  it('rejects the zero-padded 14-digit form KRS prints (it is not a REGON14 checksum)', () => {
    assert.equal(isValidRegon14('61018820100000'), false);
  });

  it('rejects a REGON14 whose first nine digits are not a valid REGON9', () => {
    // Take a valid REGON14 and alter the REGON9 part, then repair only the 14th digit.
    const bad9 = '276592499';
    assert.equal(isValidRegon9(bad9), false);
    const first13 = bad9 + '0003';
    assert.equal(isValidRegon14(first13 + regon14CheckDigit(first13)), false);
  });

  const invalid = ['610188202', '61018820', '6101882011', '000000000', '', '61018820100000', 'abcdefghi'];
  for (const raw of invalid) {
    it(`rejects REGON9 ${JSON.stringify(raw)} with a message naming REGON9`, () => {
      assert.deepEqual(parseIdentifier('REGON9', raw), { ok: false, error: 'The REGON9 must be 9 digits with a valid checksum.' });
    });
  }

  it('accepts REGON9 with spaces or dashes', () => {
    assert.deepEqual(parseIdentifier('REGON9', '610-188-201'), { ok: true, value: '610188201' });
    assert.deepEqual(parseIdentifier('REGON9', ' 610 188 201 '), { ok: true, value: '610188201' });
  });
});

describe('KRS', () => {
  const valid: Array<[string, string]> = [
    ['28860', '0000028860'],
    ['0000028860', '0000028860'],
    ['1', '0000000001'],
    ['1268296', '0001268296'],
    [' 0000 030 897 ', '0000030897'],
    ['9999999999', '9999999999'],
  ];
  for (const [raw, expected] of valid) {
    it(`pads ${JSON.stringify(raw)}`, () => {
      assert.deepEqual(parseIdentifier('KRS', raw), { ok: true, value: expected });
      assert.equal(normalizeKrs(raw), expected);
    });
  }
  for (const raw of ['', '0', '0000000000', '12345678901', '12a45', '-']) {
    it(`rejects ${JSON.stringify(raw)}`, () => {
      assert.deepEqual(parseIdentifier('KRS', raw), { ok: false, error: 'The KRS must be 1 to 10 digits and not all zeros.' });
      assert.equal(normalizeKrs(raw), null);
    });
  }
});

describe('detectIdentifierType', () => {
  const table: Array<[string, string | null]> = [
    ['7740001454', 'NIP'],
    ['PL 774-000-14-54', 'NIP'],
    ['PL7740001455', null],
    ['610188201', 'REGON9'],
    ['610188202', 'KRS'], // 9 digits, bad REGON checksum: still a possible KRS
    ['7740001455', 'KRS'],
    ['0000028860', 'KRS'],
    ['28860', 'KRS'],
    ['12345678901', null],
    ['abc', null],
    ['', null],
  ];
  for (const [raw, expected] of table) {
    it(`${JSON.stringify(raw)} -> ${expected}`, () => assert.equal(detectIdentifierType(raw), expected));
  }
});

const digitString = (length: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: length, maxLength: length });

const validNip = digitString(9)
  .filter((first9) => first9 !== '000000000' && nipCheckDigit(first9) !== null)
  .map((first9) => first9 + nipCheckDigit(first9));
const validRegon9 = digitString(8)
  .filter((first8) => first8 !== '00000000')
  .map((first8) => first8 + regon9CheckDigit(first8));
const validRegon14 = fc.tuple(validRegon9, digitString(4)).map(([r9, unit]) => {
  const first13 = r9 + unit;
  return first13 + regon14CheckDigit(first13);
});

const REGON9_W = [8, 9, 2, 3, 4, 5, 6, 7];
const REGON14_W = [2, 4, 8, 5, 0, 9, 7, 3, 6, 1, 2, 4, 8];
function remainder(digits: string, weights: number[]): number {
  return weights.reduce((sum, w, i) => sum + w * Number(digits[i]), 0) % 11;
}
function aliasesZeroAndTen(original: string, changed: string, weights: number[]): boolean {
  const pair = [remainder(original, weights), remainder(changed, weights)].sort((x, y) => x - y);
  return pair[0] === 0 && pair[1] === 10;
}

function replaceDigit(value: string, position: number, shift: number): string {
  const i = position % value.length;
  const changed = (Number(value[i]) + shift) % 10;
  return value.slice(0, i) + changed + value.slice(i + 1);
}

describe('properties', () => {
  it('accepts every generated valid number', () => {
    fc.assert(fc.property(validNip, (nip) => isValidNip(nip) && detectIdentifierType(nip) === 'NIP'));
    fc.assert(fc.property(validRegon9, (regon) => isValidRegon9(regon) && detectIdentifierType(regon) === 'REGON9'));
    fc.assert(fc.property(validRegon14, (regon) => isValidRegon14(regon)));
  });

  it('rejects any single-digit change of a valid NIP / REGON', () => {
    const change = fc.tuple(fc.nat(), fc.integer({ min: 1, max: 9 }));
    fc.assert(fc.property(validNip, change, (nip, [pos, shift]) => !isValidNip(replaceDigit(nip, pos, shift))));
    // REGON maps a remainder of 10 to check digit 0, so a change that moves the remainder between
    // 0 and 10 is the one single-digit change the algorithm cannot see; every other one is caught.
    fc.assert(
      fc.property(validRegon9, change, (regon, [pos, shift]) => {
        const changed = replaceDigit(regon, pos, shift);
        return !isValidRegon9(changed) || aliasesZeroAndTen(regon, changed, REGON9_W);
      }),
    );
    fc.assert(
      fc.property(validRegon14, change, (regon, [pos, shift]) => {
        const changed = replaceDigit(regon, pos, shift);
        return (
          !isValidRegon14(changed) ||
          aliasesZeroAndTen(regon.slice(0, 9), changed.slice(0, 9), REGON9_W) ||
          aliasesZeroAndTen(regon, changed, REGON14_W)
        );
      }),
    );
    // The caught share must be overwhelming, or the property above would be vacuous.
    let caught = 0;
    fc.assert(
      fc.property(validRegon9, change, (regon, [pos, shift]) => {
        if (!isValidRegon9(replaceDigit(regon, pos, shift))) caught++;
        return true;
      }),
      { numRuns: 1000 },
    );
    assert.ok(caught > 900, `only ${caught} of 1000 changes were caught`);
  });

  it('normalises formatting variants of one NIP to the same value', () => {
    const separator = fc.constantFrom('', ' ', '-', '  ', ' - ');
    const prefix = fc.constantFrom('', 'PL', 'pl', 'Pl ', 'PL ');
    fc.assert(
      fc.property(validNip, prefix, fc.array(separator, { minLength: 9, maxLength: 9 }), (nip, pre, seps) => {
        let raw = pre;
        for (let i = 0; i < 10; i++) raw += nip[i] + (i < 9 ? seps[i] : '');
        const parsed = parseIdentifier('NIP', ` ${raw} `);
        return parsed.ok && parsed.value === nip;
      }),
    );
  });

  it('normalises KRS with or without leading zeros to the same value', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9_999_999_999 }), fc.nat({ max: 9 }), (n, extraZeros) => {
        const bare = String(n);
        const padded = '0'.repeat(Math.min(extraZeros, 10 - bare.length)) + bare;
        const a = parseIdentifier('KRS', bare);
        const b = parseIdentifier('KRS', padded);
        return a.ok && b.ok && a.value === b.value && a.value.length === 10;
      }),
    );
  });
});

describe('identifierKey', () => {
  it('is the type code times 10^10 plus the digits, leading zeros kept apart by the type', () => {
    assert.equal(identifierKey('NIP', '5261040828'), '15261040828');
    assert.equal(identifierKey('REGON9', '012345675'), '20012345675');
    assert.equal(identifierKey('KRS', '0000028860'), '30000028860');
    assert.equal(identifierKey('KRS', '9999999999'), '39999999999');
  });

  it('is null for anything that is not a stored form', () => {
    for (const [type, value] of [
      ['NIP', '526-104-08-28'],
      ['NIP', '526104082'],
      ['REGON9', '0123456750'],
      ['KRS', '28860'],
      ['KRS', '00000288 0'],
      ['VAT' as 'NIP', '5261040828'],
      ['NIP', '１２３４５６７８９０'],
    ] as const) {
      assert.equal(identifierKey(type, value), null, `${type} ${value}`);
    }
    assert.throws(() => storedIdentifierKey('KRS', '28860'), /not a stored KRS/);
  });

  it('is one-to-one: distinct identifiers never share a key (property)', () => {
    const types = ['NIP', 'REGON9', 'KRS'] as const;
    const stored = fc
      .tuple(fc.constantFrom(...types), fc.maxSafeNat())
      .map(([type, n]) => ({ type, value: String(n % 10 ** (type === 'REGON9' ? 9 : 10)).padStart(type === 'REGON9' ? 9 : 10, '0') }));
    fc.assert(
      fc.property(
        stored,
        stored,
        (a, b) => (identifierKey(a.type, a.value) === identifierKey(b.type, b.value)) === (a.type === b.type && a.value === b.value),
      ),
    );
  });
});

describe('identifierKey of what parseIdentifier accepts', () => {
  it('every stored form has a key, whatever was typed (property)', () => {
    const typed = fc.oneof(
      validNip,
      validRegon9,
      validRegon14,
      digitString(7),
      digitString(10),
      fc.string({ maxLength: 16 }),
      validNip.map((n) => `PL ${n.slice(0, 3)}-${n.slice(3, 6)}-${n.slice(6, 8)}-${n.slice(8)}`),
    );
    fc.assert(
      fc.property(fc.constantFrom('NIP', 'REGON9', 'KRS') as fc.Arbitrary<'NIP' | 'REGON9' | 'KRS'>, typed, (type, raw) => {
        const parsed = parseIdentifier(type, raw);
        if (parsed.ok) assert.notEqual(identifierKey(type, parsed.value), null, `${type} ${raw} -> ${parsed.value}`);
      }),
      { numRuns: 5000 },
    );
  });
});
