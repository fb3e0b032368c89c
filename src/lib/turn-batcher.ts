/**
 * Groups the calls made within one turn of the event loop into one call of `run`: every request
 * whose handler reaches `add` while the same batch of sockets is being read lands in one batch,
 * which runs at setImmediate (after the poll phase). `run` answers each item, in order; when it
 * throws, every item of the batch is rejected with its error. Nothing is cached or merged: each
 * item is run once, in exactly one batch (a charge must never be deduplicated, hence not DataLoader,
 * whose loads are keyed and cached).
 */
export function createTurnBatcher<I, O>(run: (items: I[]) => Promise<O[]>, options: { maxBatch?: number } = {}): (item: I) => Promise<O> {
  const maxBatch = options.maxBatch ?? 200;
  let queue: { item: I; ok: (o: O) => void; fail: (e: unknown) => void }[] = [];
  const flush = () => {
    const batch = queue;
    queue = [];
    for (let at = 0; at < batch.length; at += maxBatch) {
      const part = batch.slice(at, at + maxBatch);
      run(part.map((p) => p.item))
        .then(
          (outs) => {
            if (outs.length !== part.length) throw new Error(`batch of ${part.length} answered ${outs.length} items`);
            part.forEach((p, i) => p.ok(outs[i]!));
          },
          (e: unknown) => part.forEach((p) => p.fail(e)),
        )
        .catch((e: unknown) => part.forEach((p) => p.fail(e)));
    }
  };
  return (item) =>
    new Promise<O>((ok, fail) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({ item, ok, fail });
    });
}
