import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wantsJson } from './html.ts';

test('wantsJson follows the Accept header weights; a tie, a wildcard or a browser gets the page', () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, false],
    ['application/json', true],
    ['APPLICATION/JSON', true],
    ['text/html', false],
    ['application/json, text/html;q=0.9', true],
    ['text/html;q=0.1, application/json', true],
    ['text/html, application/json', false],
    ['*/*', false],
    ['application/json, */*', true],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', false],
    ['application/json;q=0', false],
    ['application/json; charset=utf-8', true],
    ['application/json;charset=UTF-8;q=0.9, text/html;q=0.5', true],
    ['text/html; charset=utf-8, application/json;q=0.5', false],
  ];
  for (const [accept, json] of cases) assert.equal(wantsJson(accept), json, String(accept));
});
