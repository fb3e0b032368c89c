import { after } from 'node:test';

const stack: (() => unknown)[] = [];

// Registered when a test file first imports the helpers (at its top level), so the hook belongs
// to the file, not to whichever test happens to be running when the first cleanup is deferred.
after(async () => {
  while (stack.length > 0) {
    const f = stack.pop()!;
    try {
      await f();
    } catch (e) {
      console.error('cleanup failed:', e);
    }
  }
});

/**
 * Registers a cleanup to run when the test file ends, in reverse order of registration (like
 * `defer`): a worker is stopped before the app closes, and both before their database is dropped.
 */
export function defer(fn: () => unknown): void {
  stack.push(fn);
}
