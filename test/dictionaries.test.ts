import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, createAccount, createTestApp, type TestAccount, type TestApp } from './helpers/app.ts';

describe('GET /dictionaries/*', () => {
  let t: TestApp;
  let account: TestAccount;
  const get = (url: string, headers = bearer(account.master)) =>
    t.app.inject({ method: 'GET', url: `/api/v1/dictionaries/${url}`, headers });

  before(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
    account = await createAccount(t);
  });

  test('legal forms: slug and registry-language label, the slugs the search takes', async () => {
    const res = await get('legal-forms');
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.status, 'success');
    const spzoo = body.data.find((f: { slug: string }) => f.slug === 'sp-z-oo');
    assert.deepEqual(spzoo, {
      slug: 'sp-z-oo',
      label: 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
      abbreviation: 'SP. Z O.O.',
      register: 'krs',
    });
    assert.ok(body.data.some((f: { slug: string }) => f.slug === 'jdg'));
    assert.equal(new Set(body.data.map((f: { slug: string }) => f.slug)).size, body.data.length);
  });

  test('voivodeships: the sixteen, with TERYT code, name and slug', async () => {
    const body = (await get('voivodeships')).json();
    assert.equal(body.data.length, 16);
    assert.deepEqual(
      body.data.find((v: { code: string }) => v.code === '10'),
      { code: '10', name: 'łódzkie', slug: 'lodzkie' },
    );
  });

  test('activities: PKD 2025 subclasses, 20 a page by default, with page meta', async () => {
    const body = (await get('activities')).json();
    assert.equal(body.data.length, 20);
    assert.equal(body.meta.per_page, 20);
    assert.equal(body.meta.current_page, 1);
    assert.ok(body.meta.total > 500);
    assert.equal(body.meta.last_page, Math.ceil(body.meta.total / 20));
    assert.deepEqual(Object.keys(body.data[0]).sort(), ['code', 'dotted', 'level', 'name']);
    assert.ok(body.data.every((a: { level: string; code: string }) => a.level === 'subclass' && /^\d{4}[A-Z]$/.test(a.code)));
    const codes = body.data.map((a: { code: string }) => a.code);
    assert.deepEqual(codes, [...codes].sort());
  });

  test('activities: prefix (dots ignored), q over names ignoring case and diacritics, or over codes', async () => {
    const prefixed = (await get('activities?prefix=62.1&per_page=100')).json();
    assert.ok(prefixed.data.length > 0);
    assert.ok(prefixed.data.every((a: { code: string }) => a.code.startsWith('621')));
    assert.equal(
      prefixed.data[0].dotted,
      `${prefixed.data[0].code.slice(0, 2)}.${prefixed.data[0].code.slice(2, 4)}.${prefixed.data[0].code[4]}`,
    );

    const named = (await get(`activities?q=${encodeURIComponent('OPROGRAMOWANIA')}&per_page=100`)).json();
    assert.ok(named.data.length > 0);
    assert.ok(named.data.every((a: { name: string }) => /OPROGRAMOWANI/.test(a.name)));
    const folded = (await get('activities?q=oprogramowania&per_page=100')).json();
    assert.equal(folded.meta.total, named.meta.total);
    const diacritics = (await get(`activities?q=${encodeURIComponent('sprzedaż detaliczna')}&per_page=5`)).json();
    const plain = (await get('activities?q=sprzedaz%20detaliczna&per_page=5')).json();
    assert.ok(diacritics.meta.total > 0);
    assert.equal(diacritics.meta.total, plain.meta.total);

    const byCode = (await get('activities?q=47.11')).json();
    assert.ok(byCode.data.some((a: { code: string }) => a.code.startsWith('4711')));
    const none = (await get('activities?q=zzzzqqq')).json();
    assert.deepEqual(none.data, []);
    assert.equal(none.meta.total, 0);
    assert.equal(none.meta.last_page, 1);
  });

  test('activities: PKD 2007 and every level on request', async () => {
    const v2007 = (await get('activities?version=2007&q=6201')).json();
    assert.ok(
      v2007.data.some((a: { code: string }) => a.code === '6201Z'),
      'PKD 2007 has 62.01.Z, which PKD 2025 split',
    );
    const all = (await get('activities?level=all&prefix=62&per_page=100')).json();
    assert.deepEqual([...new Set(all.data.map((a: { level: string }) => a.level))].sort(), ['class', 'division', 'group', 'subclass']);
    assert.equal(all.data.find((a: { code: string }) => a.code === '62').dotted, '62');
  });

  test('bounds: per_page 1 to 100, page at least 1, known version and level; 422 on the field', async () => {
    for (const [query, field] of [
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['page=0', 'page'],
      ['version=2010', 'version'],
      ['level=x', 'level'],
      [`q=${'a'.repeat(101)}`, 'q'],
      [`prefix=${'1'.repeat(11)}`, 'prefix'],
    ]) {
      const res = await get(`activities?${query}`);
      assert.equal(res.statusCode, 422, query);
      assert.ok(res.json().errors[field], `${query}: ${res.body}`);
    }
    const far = (await get('activities?page=1000')).json();
    assert.deepEqual(far.data, []);
  });

  test('free, but a token is needed', async () => {
    for (const url of ['legal-forms', 'voivodeships', 'activities']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/dictionaries/${url}` });
      assert.equal(res.statusCode, 401, url);
    }
    const wallet = (await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(account.master) })).json().data;
    assert.equal(wallet.balance, 100);
  });
});
