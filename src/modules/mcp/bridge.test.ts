import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { endpointOf, remoteError } from './bridge.ts';

describe('endpointOf: REGWATCH_URL as the base or the endpoint itself', () => {
  const table: Array<[string, string]> = [
    ['http://127.0.0.1:3000', 'http://127.0.0.1:3000/api/v1/mcp'],
    ['http://127.0.0.1:3000/', 'http://127.0.0.1:3000/api/v1/mcp'],
    ['https://api.example.com/regwatch', 'https://api.example.com/regwatch/api/v1/mcp'],
    ['https://api.example.com/regwatch/', 'https://api.example.com/regwatch/api/v1/mcp'],
    ['http://h:1/api/v1/mcp', 'http://h:1/api/v1/mcp'],
    ['http://h:1/api/v1/mcp/', 'http://h:1/api/v1/mcp'],
    // The REST API's base, as a client of the API has it configured: not `…/api/v1/api/v1/mcp`.
    ['http://h:1/api/v1', 'http://h:1/api/v1/mcp'],
    ['https://api.example.com/regwatch/api/v1/', 'https://api.example.com/regwatch/api/v1/mcp'],
  ];
  for (const [given, expected] of table) it(given, () => assert.equal(endpointOf(given).href, expected));
  it('refuses what is not an http(s) URL', () => {
    for (const bad of ['localhost:3000', '127.0.0.1:3000', 'ftp://h/', '']) assert.throws(() => endpointOf(bad), bad);
  });
});

describe('remoteError: the REST message behind a failed exchange', () => {
  const endpoint = new URL('http://h:1/api/v1/mcp');
  const http = (status: number, body: string) => new StreamableHTTPError(status, `Error POSTing to endpoint: ${body}`);
  it('401 body: `error`, and its `code`', () =>
    assert.deepEqual(remoteError(http(401, '{"error":"Token revoked","code":"UNAUTHORIZED"}'), endpoint), {
      status: 401,
      message: 'Token revoked',
      code: 'UNAUTHORIZED',
    }));
  it('429 body: `message`', () =>
    assert.deepEqual(remoteError(http(429, '{"message":"Too Many Attempts."}'), endpoint), { status: 429, message: 'Too Many Attempts.' }));
  it("a body that is not regwatch's", () =>
    assert.deepEqual(remoteError(http(502, '<html>Bad gateway</html>'), endpoint), {
      status: 502,
      message: 'The regwatch server at http://h:1 answered HTTP 502.',
    }));
  it('no answer at all', () =>
    assert.deepEqual(remoteError(new TypeError('fetch failed'), endpoint), {
      status: 502,
      message: 'The regwatch server at http://h:1 could not be reached: fetch failed',
    }));
});
