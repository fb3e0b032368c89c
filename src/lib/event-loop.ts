/**
 * Letting I/O callbacks run in the middle of a long stretch of work on one thread: awaiting
 * setImmediate lets one poll phase of the event loop run (socket reads, their callbacks) before
 * the work goes on.
 */

export const yieldToEventLoop = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A loop's slices of about `ms` milliseconds: `due()` is true once a slice has run that long,
 * and `yield()` starts the next after the event loop has had its turn. A loop that plans while
 * a transaction it started waits on this thread gives that transaction its round trips every few
 * milliseconds instead of at the loop's end.
 */
export function createTimeSlices(ms: number, now: () => number = () => performance.now()) {
  let sliceStart = now();
  return {
    due: () => now() - sliceStart >= ms,
    async yield(): Promise<void> {
      await yieldToEventLoop();
      sliceStart = now();
    },
  };
}
