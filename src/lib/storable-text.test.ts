import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isStorableText, toStorableText, unstorableTextFields } from './storable-text.ts';

/** The definition, code unit by code unit. */
function storableByDefinition(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) return false;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return false;
  }
  return true;
}

describe('isStorableText', () => {
  test('table', () => {
    const cases: [string, boolean][] = [
      ['', true],
      ['Łódź', true],
      ['😀', true],
      ['a\ud83d\ude00b', true],
      ['\u0001\u007f\uffff\ufffd', true],
      ['\u0000', false],
      ['a\u0000', false],
      ['\ud800', false],
      ['\udc00', false],
      ['a\ud83db', false],
      ['\ude00\ud83d', false],
      ['😀\ud800', false],
    ];
    for (const [s, ok] of cases) assert.equal(isStorableText(s), ok, JSON.stringify(s));
  });

  test('is "no NUL, every surrogate paired"', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 }).map((u) => String.fromCharCode(...u)),
        fc.string({ unit: fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff', 'a', '😀'), maxLength: 6 }),
        (a, b) => {
          const s = a + b + a;
          assert.equal(isStorableText(s), storableByDefinition(s), JSON.stringify(s));
        },
      ),
      { numRuns: 3000, seed: 19 },
    );
  });
});

describe('toStorableText', () => {
  test('what cannot be stored becomes U+FFFD, code unit for code unit; storable text is returned as it is', () => {
    assert.equal(toStorableText('ok\u0000\u0000'), 'ok\ufffd\ufffd');
    assert.equal(toStorableText('a\ud800b\udc00'), 'a\ufffdb\ufffd');
    assert.equal(toStorableText('😀Łódź'), '😀Łódź');
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('\u0000', '\ud800', '\udc00', 'a', '😀', '\ufffd'), maxLength: 12 }), (s) => {
        const out = toStorableText(s);
        assert.ok(isStorableText(out), JSON.stringify(s));
        assert.equal(out.length, s.length);
        if (isStorableText(s)) assert.equal(out, s);
      }),
      { numRuns: 2000, seed: 7 },
    );
  });
});

describe('unstorableTextFields', () => {
  test('dotted paths in document order; keys count against their object; other values are ignored', () => {
    assert.deepEqual(unstorableTextFields({ a: 'ok', b: ['x', 'y\u0000', { c: '\ud800' }], d: 1, e: null, f: true }), ['b.1', 'b.2.c']);
    assert.deepEqual(unstorableTextFields({ outer: { 'k\u0000': 1 }, 'top\udc00': 'v' }), ['', 'outer']);
    assert.deepEqual(unstorableTextFields('\u0000'), ['']);
    assert.deepEqual(unstorableTextFields({ a: ['\u0000', '\u0000'] }), ['a.0', 'a.1']);
    assert.deepEqual(unstorableTextFields(undefined), []);
    assert.deepEqual(unstorableTextFields(Buffer.from([0, 0xed, 0xa0, 0x80])), [], 'raw bodies are not text');
    const q = Object.assign(Object.create(null) as object, { city: 'a\u0000' });
    assert.deepEqual(unstorableTextFields(q), ['city'], 'query objects have no prototype');
  });

  test('finds exactly the bad strings of any JSON value', () => {
    const bad = fc.constantFrom('\u0000', 'x\ud800', '\udfffy');
    const json = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.string(),
        bad,
        fc.integer(),
        fc.constant(null),
        fc.array(tie('v'), { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 4 }), tie('v'), { maxKeys: 4 }),
      ),
    })).v;
    fc.assert(
      fc.property(json, (value) => {
        const expected: string[] = [];
        const walk = (v: unknown, path: string) => {
          if (typeof v === 'string') {
            if (!isStorableText(v)) expected.push(path);
          } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, path === '' ? String(i) : `${path}.${i}`));
          else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, path === '' ? k : `${path}.${k}`);
        };
        walk(value, '');
        assert.deepEqual(unstorableTextFields(value).sort(), [...new Set(expected)].sort());
      }),
      { numRuns: 500, seed: 19 },
    );
  });
});
