import { EventEmitter } from 'node:events';
import { Logger as WorkerLogger, parseCrontab, run, type Runner, type TaskList, type WorkerEvents } from 'graphile-worker';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { JobModule } from './queue.ts';
import { startWorkerRecovery, type RecoveryOptions } from './recovery.ts';

function workerLogger(logger: Logger): WorkerLogger {
  return new WorkerLogger((scope) => (level, message, meta) => {
    const child = logger.child({
      component: 'worker',
      ...(scope.taskIdentifier ? { task: scope.taskIdentifier } : {}),
      ...(scope.jobId ? { job_id: scope.jobId } : {}),
    });
    const fields = meta && Object.keys(meta).length ? { meta } : {};
    if (level === 'error') child.error(fields, message);
    else if (level === 'warning') child.warn(fields, message);
    else if (level === 'info')
      child.debug(fields, message); // graphile-worker is chatty at info
    else child.trace(fields, message);
  });
}

/**
 * Runs every module's tasks and the merged UTC crontab on graphile-worker. Signals are the
 * process's to handle (graceful shutdown stops the runner after the HTTP server drains). The jobs
 * of a worker process that died are handed back to the living ones (recovery.ts).
 */
export async function startWorker(options: {
  pool: pg.Pool;
  logger: Logger;
  modules: JobModule[];
  concurrency?: number;
  pollInterval?: number;
  recovery?: RecoveryOptions;
}): Promise<Runner> {
  const taskList: TaskList = {};
  const crontab: string[] = [];
  for (const m of options.modules) {
    for (const [name, task] of Object.entries(m.tasks)) {
      if (taskList[name]) throw new Error(`Two job modules define the task ${name}`);
      taskList[name] = task;
    }
    crontab.push(...(m.crontab ?? []));
  }
  const recovery = await startWorkerRecovery(options.pool, options.logger, options.recovery);
  // graphile-worker 0.17 locks a job in the name of the worker pool that took it (locked_by is the
  // pool's id, not the worker's), and creates the pool inside run(): its id is recorded as it appears.
  const events: WorkerEvents = new EventEmitter();
  events.on('pool:create', ({ workerPool }) => recovery.register(workerPool.id));
  let runner: Runner;
  try {
    runner = await run({
      pgPool: options.pool,
      taskList,
      parsedCronItems: parseCrontab(crontab.join('\n')),
      concurrency: options.concurrency ?? 4,
      pollInterval: options.pollInterval ?? 1000,
      noHandleSignals: true,
      logger: workerLogger(options.logger),
      events,
    });
  } catch (e) {
    await recovery.stop();
    throw e;
  }
  // This process's pool is forgotten only once it has stopped (its jobs released).
  const thenStopRecovery =
    (end: Runner['stop']): Runner['stop'] =>
    async (reason) => {
      try {
        await end.call(runner, reason);
      } finally {
        await recovery.stop();
      }
    };
  runner.stop = thenStopRecovery(runner.stop);
  runner.kill = thenStopRecovery(runner.kill);
  return runner;
}
