import { Worker } from 'node:worker_threads';

/**
 * A worker thread running a TypeScript module through tsx, as the main thread does. Loader hooks
 * are not inherited by an eval worker (neither tsx's `register()`, as the `regwatch` binary uses,
 * nor `--import tsx`), so the bootstrap registers tsx itself before importing `entry` (a module's
 * `import.meta.url`; the module tells it runs as the worker by `workerData.role`). A failure to
 * load is posted as `{type: 'fatal', message, code}`.
 */
export function startTsWorker(entry: string, workerData: { role: string } & Record<string, unknown>): Worker {
  return new Worker(bootstrap(), { eval: true, workerData: { ...workerData, entry, tsxApi: import.meta.resolve('tsx/esm/api') } });
}

function bootstrap(): string {
  return `
    const { workerData, parentPort } = require('node:worker_threads');
    (async () => {
      if (workerData.tsxApi) (await import(workerData.tsxApi)).register();
      await import(workerData.entry);
    })().catch((e) => parentPort.postMessage({ type: 'fatal', message: String(e && e.stack || e), code: e && e.code }));
  `;
}
