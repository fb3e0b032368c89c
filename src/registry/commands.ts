import { watchedNips } from './vat-refresh.ts';
import type { RegistryExecutor } from './store/executor.ts';
import { Presets, SingleBar } from 'cli-progress';
import pino from 'pino';
import type { Config } from '../config.ts';
import { createLogger } from '../logger.ts';
import { openRuntime } from '../runtime.ts';
import { isIsoDate } from '../lib/dates.ts';
import type { DailyProgress } from './daily/options.ts';
import { runDaily } from './daily/run.ts';
import { formatSummary, type DailyRunSummary } from './daily/summary.ts';
import { resolveSource, SourceSpecError, DEFAULT_SYNTHETIC_SEED } from './sources/resolve.ts';
import { fileSourceOrigin } from './sources/file.ts';
import { discardPrestartedWorker, prestartPrepareWorker } from './prepare-worker.ts';
import { fileSize, WORKER_MIN_FILE_BYTES } from './daily/full-export-heuristics.ts';
import { seedSyntheticCompanies } from './demo.ts';

/** `regwatch daily` and `regwatch seed`. Logs go to stderr; stdout carries only the summary line. */

const DAILY_USAGE = 'Usage: regwatch daily --date YYYY-MM-DD --source file:PATH|synthetic[:SEED]|krs|bir|ceidg|vat';
const SEED_USAGE = 'Usage: regwatch seed --synthetic N [--seed S] [--date YYYY-MM-DD]';

function usageError(message: string, usage: string): number {
  console.error(`regwatch: ${message}\n${usage}`);
  return 2;
}

function stderrLogger(config: Config) {
  return createLogger(config.logLevel, pino.destination({ dest: 2, sync: true }));
}

/** A progress bar on a terminal (cli-progress); nothing at all when stderr is not one. */
function progressPrinter(): { onProgress?: (p: DailyProgress) => void; done(): void } {
  if (!process.stderr.isTTY) return { done: () => {} };
  let bar: SingleBar | null = null;
  const values = (p: DailyProgress) => ({
    rate: Math.round(p.rate).toLocaleString('en'),
    created: p.new,
    updated: p.updated,
    events: p.events,
    of: p.expectedTotal === null ? '' : ` of ${p.expectedTotal.toLocaleString('en')}`,
  });
  return {
    onProgress: (p) => {
      if (!bar) {
        const format = `${p.expectedTotal === null ? '' : '{bar} {percentage}% '}{value}{of} companies, {rate}/s, ETA {eta_formatted} (new {created}, updated {updated}, events {events})`;
        bar = new SingleBar(
          { stream: process.stderr, format, fps: 4, hideCursor: true, clearOnComplete: true, etaBuffer: 50 },
          Presets.shades_classic,
        );
        bar.start(p.expectedTotal ?? 0, p.processed, values(p));
      }
      bar.update(p.processed, values(p));
    },
    done: () => {
      bar?.stop();
      bar = null;
    },
  };
}

/** Stops the run cleanly on Ctrl-C: the committed batches stay, and the next run resumes. */
function abortOnSignals(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSignal = () => controller.abort(new Error('interrupted'));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    dispose: () => {
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
    },
  };
}

export async function dailyCommand(config: Config, options: { date?: string; source?: string; batchSize?: number }): Promise<number> {
  const { date, source: spec, batchSize } = options;
  if (!date) return usageError('--date is required', DAILY_USAGE);
  if (!isIsoDate(date)) return usageError(`--date must be a date written YYYY-MM-DD (got "${date}")`, DAILY_USAGE);
  if (!spec) return usageError('--source is required', DAILY_USAGE);
  if (batchSize !== undefined && (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 50_000)) {
    return usageError('--batch-size must be an integer from 1 to 50000', DAILY_USAGE);
  }

  const logger = stderrLogger(config);
  // The command's start, for the run's timeline: ms since the process started.
  logger.info({ since_start_ms: Math.round(performance.now()) }, 'daily command started');
  const progress = progressPrinter();
  let resolved;
  // The database opens after the spec is checked; the VAT list asks for its NIPs only once running.
  let runtimeDb: RegistryExecutor | null = null;
  const vatNipsToRefresh = (date: string) => watchedNips(runtimeDb!)(date);
  try {
    resolved = await resolveSource(spec, { config, logger, countFileLines: progress.onProgress !== undefined, deps: { vatNipsToRefresh } });
  } catch (e) {
    if (e instanceof SourceSpecError) return usageError(e.message, DAILY_USAGE);
    throw e;
  }
  // A file the run will prepare in the worker thread (pipeline.ts): the worker starts now, while
  // the database opens and the run begins.
  const origin = fileSourceOrigin(resolved.source);
  if (origin !== null && fileSize(origin.path) >= WORKER_MIN_FILE_BYTES) prestartPrepareWorker();
  let runtime;
  try {
    runtime = await openRuntime(config, logger, { poolSize: 4 });
  } catch (e) {
    await discardPrestartedWorker();
    throw e;
  }
  logger.info({ since_start_ms: Math.round(performance.now()) }, 'database open');
  runtimeDb = runtime.database.db as unknown as RegistryExecutor;
  const abort = abortOnSignals();
  let summary: DailyRunSummary;
  try {
    summary = await runDaily(runtime.database.db, {
      date,
      source: resolved.source,
      sourceKey: resolved.sourceKey,
      expectedTotal: resolved.expectedTotal,
      batchSize,
      onProgress: progress.onProgress,
      signal: abort.signal,
      logger,
    });
  } finally {
    progress.done();
    abort.dispose();
    await discardPrestartedWorker();
    await runtime.close();
  }
  logger.info({ since_start_ms: Math.round(performance.now()) }, 'daily command done');
  console.log(formatSummary(summary));
  return 0;
}

export async function seedCommand(config: Config, values: { synthetic?: string; seed?: string; date?: string }): Promise<number> {
  const count = Number(values.synthetic);
  if (values.synthetic === undefined || !Number.isInteger(count) || count < 1 || count > 10_000_000) {
    return usageError('--synthetic N is required: the number of companies, 1 to 10000000', SEED_USAGE);
  }
  const seed = values.seed === undefined ? undefined : Number(values.seed);
  if (seed !== undefined && (!Number.isSafeInteger(seed) || seed < 0))
    return usageError('--seed must be a non-negative integer', SEED_USAGE);
  const date = values.date ?? new Date().toISOString().slice(0, 10);
  if (!isIsoDate(date)) return usageError(`--date must be a date written YYYY-MM-DD (got "${date}")`, SEED_USAGE);

  const logger = stderrLogger(config);
  const progress = progressPrinter();
  const runtime = await openRuntime(config, logger, { poolSize: 4 });
  const abort = abortOnSignals();
  try {
    const summary = await seedSyntheticCompanies(runtime.database.db, {
      count,
      seed: seed ?? DEFAULT_SYNTHETIC_SEED + 1 + Math.floor(Math.random() * 1_000_000),
      date,
      onProgress: progress.onProgress,
      signal: abort.signal,
      logger,
    });
    progress.done();
    console.log(formatSummary(summary));
    return 0;
  } finally {
    progress.done();
    abort.dispose();
    await runtime.close();
  }
}
