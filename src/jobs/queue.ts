import { sql } from 'kysely';
import type { Task } from 'graphile-worker';
import type { DbOrTrx } from '../db/database.ts';

export interface AddJobOptions {
  /** Dedupe: a job with the same key replaces (or, with jobKeyMode 'preserve_run_at', keeps) the pending one. */
  jobKey?: string;
  jobKeyMode?: 'replace' | 'preserve_run_at' | 'unsafe_dedupe';
  runAt?: Date;
  maxAttempts?: number;
  priority?: number;
  queueName?: string;
}

/**
 * Adds a graphile-worker job through SQL, so it commits or rolls back with the rows that need
 * it (pass the transaction): a job is never queued for work that did not happen, nor lost.
 */
export async function addJob(db: DbOrTrx, task: string, payload: unknown, options: AddJobOptions = {}): Promise<void> {
  await sql`SELECT graphile_worker.add_job(
      identifier => ${task}::text,
      payload => ${JSON.stringify(payload ?? {})}::json,
      queue_name => ${options.queueName ?? null}::text,
      run_at => ${options.runAt ?? null}::timestamptz,
      max_attempts => ${options.maxAttempts ?? null}::int,
      job_key => ${options.jobKey ?? null}::text,
      priority => ${options.priority ?? null}::int,
      job_key_mode => ${options.jobKeyMode ?? null}::text
    )`.execute(db);
}

/**
 * What a module contributes to the worker: its task handlers and its crontab lines (UTC).
 * The worker composition (src/jobs/worker.ts) merges every module's contribution.
 */
export interface JobModule {
  tasks: Record<string, Task>;
  crontab?: string[];
}
