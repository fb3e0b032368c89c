import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createTimeSlices } from './event-loop.ts';

test('a slice is due once it has run its time, and the next starts after the yield', async () => {
  let clock = 0;
  const slices = createTimeSlices(2, () => clock);
  assert.equal(slices.due(), false);
  clock = 1.9;
  assert.equal(slices.due(), false);
  clock = 2;
  assert.equal(slices.due(), true);
  await slices.yield();
  assert.equal(slices.due(), false);
  clock = 4;
  assert.equal(slices.due(), true);
});

test('I/O callbacks run at a yield, in the middle of the loop, not after it', async () => {
  const order: string[] = [];
  // A timer stands for a socket's reply: it is due before the loop starts and runs only when the loop lets it.
  setTimeout(() => order.push('reply'), 0);
  const start = performance.now();
  while (performance.now() - start < 5);
  const slices = createTimeSlices(1);
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    while (performance.now() - t < 1.5);
    order.push(`work ${i}`);
    if (slices.due()) await slices.yield();
  }
  assert.deepEqual(order, ['work 0', 'reply', 'work 1', 'work 2']);
});
