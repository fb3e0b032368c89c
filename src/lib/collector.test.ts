import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { MEMORY_REDUCER_OFF, memoryReducerOff } from './collector.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

test('memoryReducerOff reads the node options the process was started with', () => {
  assert.equal(memoryReducerOff(['--import', 'tsx', '--no-memory-reducer']), true);
  assert.equal(memoryReducerOff(['--import', 'tsx']), false);
  assert.equal(memoryReducerOff(['--memory-reducer']), false);
});

test('every way the docs give to run the API starts node with the memory reducer off', () => {
  const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
  assert.match(pkg.scripts.start, new RegExp(`^node ${MEMORY_REDUCER_OFF} bin/regwatch\\.js serve$`));
  assert.match(read('bin/regwatch.js').split('\n')[0], new RegExp(`^#!/usr/bin/env -S node ${MEMORY_REDUCER_OFF}$`));
  assert.ok(read('Dockerfile').includes(`CMD ["node", "${MEMORY_REDUCER_OFF}", "bin/regwatch.js", "serve"]`));
  assert.ok(read('deploy/compose.yaml').includes(`command: ['node', '${MEMORY_REDUCER_OFF}', 'bin/regwatch.js', 'serve']`));
});
