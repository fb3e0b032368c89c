import { Logger as WorkerLogger, parseCrontab, run, type Runner, type TaskList } from 'graphile-worker';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { JobModule } from './queue.ts';

function workerLogger(logger: Logger): WorkerLogger {
  return new WorkerLogger((scope) => (level, message, meta) => {
    const child = logger.child({ component: 'worker', ...(scope.taskIdentifier ? { task: scope.taskIdentifier } : {}), ...(scope.jobId ? { job_id: scope.jobId } : {}) });
    const fields = meta && Object.keys(meta).length ? { meta } : {};
    if (level === 'error') child.error(fields, message);
    else if (level === 'warning') child.warn(fields, message);
    else if (level === 'info') child.debug(fields, message); // graphile-worker is chatty at info
    else child.trace(fields, message);
  });
}

/**
 * Runs every module's tasks and the merged UTC crontab on graphile-worker. Signals are the
 * process's to handle (graceful shutdown stops the runner after the HTTP server drains).
 */
export async function startWorker(options: { pool: pg.Pool; logger: Logger; modules: JobModule[]; concurrency?: number; pollInterval?: number }): Promise<Runner> {
  const taskList: TaskList = {};
  const crontab: string[] = [];
  for (const m of options.modules) {
    for (const [name, task] of Object.entries(m.tasks)) {
      if (taskList[name]) throw new Error(`Two job modules define the task ${name}`);
      taskList[name] = task;
    }
    crontab.push(...(m.crontab ?? []));
  }
  return run({
    pgPool: options.pool,
    taskList,
    parsedCronItems: parseCrontab(crontab.join('\n')),
    concurrency: options.concurrency ?? 4,
    pollInterval: options.pollInterval ?? 1000,
    noHandleSignals: true,
    logger: workerLogger(options.logger),
  });
}
