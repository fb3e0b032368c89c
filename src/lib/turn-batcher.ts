/**
 * Groups the calls made within one turn of the event loop into one call of `run`: every request
 * whose handler reaches the batcher while the same batch of sockets is being read lands in one
 * batch, which runs at setImmediate (after the poll phase). With `maxInFlight`, no more batches
 * run at once: calls made meanwhile wait and go together in the next batch, so batches grow with
 * the load instead of their number. `run` answers each item, in order; when it throws, every item
 * of that batch is rejected with its error. Nothing is cached or merged: each item is run once, in
 * exactly one batch (a charge must never be deduplicated, hence not DataLoader, whose loads are
 * keyed and cached).
 */
export function createTurnBatcher<I, O>(
  run: (items: I[]) => Promise<O[]>,
  options: { maxBatch?: number; maxInFlight?: number } = {},
): (item: I) => Promise<O> {
  const maxBatch = options.maxBatch ?? 200;
  const maxInFlight = options.maxInFlight ?? Infinity;
  let queue: { item: I; ok: (o: O) => void; fail: (e: unknown) => void }[] = [];
  let scheduled = false;
  let inFlight = 0;
  const schedule = () => {
    if (scheduled || queue.length === 0 || inFlight >= maxInFlight) return;
    scheduled = true;
    setImmediate(flush);
  };
  const flush = () => {
    scheduled = false;
    while (queue.length > 0 && inFlight < maxInFlight) {
      const part = queue.slice(0, maxBatch);
      queue = queue.slice(part.length);
      inFlight++;
      run(part.map((p) => p.item))
        .then((outs) => {
          if (outs.length !== part.length) throw new Error(`a batch of ${part.length} answered ${outs.length} items`);
          part.forEach((p, i) => p.ok(outs[i]!));
        })
        .catch((e: unknown) => part.forEach((p) => p.fail(e)))
        .finally(() => {
          inFlight--;
          schedule();
        });
    }
  };
  return (item) =>
    new Promise<O>((ok, fail) => {
      queue.push({ item, ok, fail });
      schedule();
    });
}
