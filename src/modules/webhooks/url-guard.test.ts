import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkWebhookUrl, isPublicAddress, type ResolveHost } from './url-guard.ts';

test('address classification: IPv4', () => {
  for (const a of [
    '0.0.0.0',
    '0.1.2.3',
    '10.0.0.1',
    '10.255.255.255',
    '100.64.0.1',
    '127.0.0.1',
    '127.255.0.9',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.8',
    '192.0.2.1',
    '192.168.1.1',
    '198.18.0.1',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.1',
    '239.1.1.1',
    '240.0.0.1',
    '255.255.255.255',
  ]) {
    assert.equal(isPublicAddress(a), false, a);
  }
  for (const a of ['1.1.1.1', '8.8.8.8', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '193.0.0.1', '169.253.0.1']) {
    assert.equal(isPublicAddress(a), true, a);
  }
});

test('address classification: IPv6, IPv4-mapped and embedded forms', () => {
  for (const a of [
    '::',
    '::1',
    '[::1]',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::',
    '2001:db8::1',
    '2001::1',
    '::127.0.0.1',
    '100::1',
    'fec0::1',
  ]) {
    assert.equal(isPublicAddress(a), false, a);
  }
  for (const a of ['2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:0808:0808::1']) {
    assert.equal(isPublicAddress(a), true, a);
  }
  for (const a of ['', 'localhost', '1.2.3', '256.1.1.1', '1::2::3', 'gggg::1'])
    assert.equal(isPublicAddress(a), false, `not an address: ${a}`);
});

const noNetwork: ResolveHost = async (host) => {
  if (host === 'inside.test') return [{ address: '10.1.2.3', family: 4 }];
  if (host === 'mixed.test')
    return [
      { address: '93.184.216.34', family: 4 },
      { address: '::1', family: 6 },
    ];
  if (host === 'public.test') return [{ address: '93.184.216.34', family: 4 }];
  throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
};

test('URL check: decimal, octal, hex and short host forms are the loopback they name', async () => {
  for (const u of [
    'http://127.0.0.1/',
    'http://2130706433/',
    'http://0x7f000001/',
    'http://0177.0.0.1/',
    'http://127.1/',
    'http://0x7f.1/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://0/',
    'http://169.254.169.254/latest/meta-data',
    'http://inside.test/',
    'http://mixed.test/',
    'http://unknown.test/',
  ]) {
    const v = await checkWebhookUrl(u, { allowPrivate: false, resolve: noNetwork });
    assert.equal(v.ok, false, u);
  }
  assert.equal((await checkWebhookUrl('https://public.test/hook', { allowPrivate: false, resolve: noNetwork })).ok, true);
  assert.equal((await checkWebhookUrl('http://127.0.0.1:8080/', { allowPrivate: true, resolve: noNetwork })).ok, true);
});

test('URL check: only http(s), bounded, no credentials, a port that can be connected to', async () => {
  for (const u of [
    'file:///etc/passwd',
    'ftp://public.test/',
    'gopher://public.test/',
    'javascript:alert(1)',
    'not a url',
    `https://public.test/${'a'.repeat(3000)}`,
    'https://user:pw@public.test/',
    'https://public.test:0/',
    'http://public.test:65536/',
  ]) {
    assert.equal((await checkWebhookUrl(u, { allowPrivate: true, resolve: noNetwork })).ok, false, u.slice(0, 40));
  }
  assert.deepEqual(await checkWebhookUrl('https://public.test:0/', { allowPrivate: true, resolve: noNetwork }), {
    ok: false,
    error: "The url's port must be between 1 and 65535.",
  });
  for (const u of ['https://public.test:1/', 'https://public.test:65535/', 'https://public.test:00443/']) {
    assert.equal((await checkWebhookUrl(u, { allowPrivate: true, resolve: noNetwork })).ok, true, u);
  }
});
