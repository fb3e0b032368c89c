import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { API_NODE_OPTIONS, memoryReducerOff, missingApiNodeOptions, v8PoolSized } from './collector.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

test('memoryReducerOff reads the node options the process was started with', () => {
  assert.equal(memoryReducerOff(['--import', 'tsx', '--no-memory-reducer']), true);
  assert.equal(memoryReducerOff(['--import', 'tsx']), false);
  assert.equal(memoryReducerOff(['--memory-reducer']), false);
});

test('v8PoolSized reads the command line and NODE_OPTIONS', () => {
  assert.equal(v8PoolSized(['--v8-pool-size=0'], ''), true);
  assert.equal(v8PoolSized([], '--max-old-space-size=4096 --v8-pool-size=2'), true);
  assert.equal(v8PoolSized(['--import', 'tsx'], '--max-old-space-size=4096'), false);
  assert.deepEqual(missingApiNodeOptions(['--no-memory-reducer'], ''), ['--v8-pool-size=0']);
  assert.deepEqual(missingApiNodeOptions(['--no-memory-reducer', '--v8-pool-size=0'], ''), []);
  assert.deepEqual(missingApiNodeOptions([], ''), ['--no-memory-reducer', '--v8-pool-size=0']);
});

test('every way the docs give to run the API starts node with the API node options', () => {
  const options = API_NODE_OPTIONS.join(' ');
  const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
  assert.equal(pkg.scripts.start, `node ${options} bin/regwatch.js serve`);
  assert.equal(read('bin/regwatch.js').split('\n')[0], `#!/usr/bin/env -S node ${options}`);
  const quoted = (q: string) => API_NODE_OPTIONS.map((o) => `${q}${o}${q}`).join(', ');
  assert.ok(read('Dockerfile').includes(`CMD ["node", ${quoted('"')}, "bin/regwatch.js", "serve"]`));
  assert.ok(read('deploy/compose.yaml').includes(`command: ['node', ${quoted("'")}, 'bin/regwatch.js', 'serve']`));
});
