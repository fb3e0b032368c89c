import { watchedNips } from './vat-refresh.ts';
import type { RegistryExecutor } from './store/executor.ts';
import pino from 'pino';
import type { Config } from '../config.ts';
import { createLogger } from '../logger.ts';
import { openRuntime } from '../runtime.ts';
import { isIsoDate } from '../lib/dates.ts';
import type { DailyProgress } from './daily/options.ts';
import { runDaily } from './daily/run.ts';
import { formatSummary, type DailyRunSummary } from './daily/summary.ts';
import { resolveSource, SourceSpecError, DEFAULT_SYNTHETIC_SEED } from './sources/resolve.ts';
import { seedSyntheticCompanies } from './demo.ts';

/** `regwatch daily` and `regwatch seed`. Logs go to stderr; stdout carries only the summary line. */

interface CommandContext {
  config: Config;
  argv: string[];
}

const DAILY_USAGE = 'Usage: regwatch daily --date YYYY-MM-DD --source file:PATH|synthetic[:SEED]|krs|bir|ceidg|vat';
const SEED_USAGE = 'Usage: regwatch seed --synthetic N [--seed S] [--date YYYY-MM-DD]';

function usageError(message: string, usage: string): number {
  console.error(`regwatch: ${message}\n${usage}`);
  return 2;
}

async function parse(argv: string[], options: Record<string, { type: 'string' | 'boolean' }>) {
  const { parseCommandArgs } = await import('../cli.ts');
  return parseCommandArgs(argv, options);
}

function stderrLogger(config: Config) {
  return createLogger(config.logLevel, pino.destination({ dest: 2, sync: true }));
}

/** A single self-rewriting line on a terminal; nothing at all when stderr is not one. */
function progressPrinter(): { onProgress?: (p: DailyProgress) => void; done(): void } {
  if (!process.stderr.isTTY) return { done: () => {} };
  let last = 0;
  let shown = false;
  return {
    onProgress: (p) => {
      const t = Date.now();
      if (t - last < 250) return;
      last = t;
      shown = true;
      const eta = p.etaMs === null ? '' : `, ${formatDuration(p.etaMs)} left`;
      const of = p.expectedTotal === null ? '' : ` of ${p.expectedTotal.toLocaleString('en')}`;
      process.stderr.write(`\r\x1b[K${p.processed.toLocaleString('en')}${of} companies, ${Math.round(p.rate).toLocaleString('en')}/s${eta} (new ${p.new}, updated ${p.updated}, events ${p.events})`);
    },
    done: () => {
      if (shown) process.stderr.write('\r\x1b[K');
    },
  };
}

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(sec).padStart(2, '0')}s` : `${sec}s`;
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

export async function dailyCommand({ config, argv }: CommandContext): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = await parse(argv, { date: { type: 'string' }, source: { type: 'string' }, 'batch-size': { type: 'string' } }));
  } catch (e) {
    return usageError((e as Error).message, DAILY_USAGE);
  }
  const date = values.date as string | undefined;
  const spec = values.source as string | undefined;
  if (!date) return usageError('--date is required', DAILY_USAGE);
  if (!isIsoDate(date)) return usageError(`--date must be a date written YYYY-MM-DD (got "${date}")`, DAILY_USAGE);
  if (!spec) return usageError('--source is required', DAILY_USAGE);
  const batchSize = values['batch-size'] === undefined ? undefined : Number(values['batch-size']);
  if (batchSize !== undefined && (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 50_000)) {
    return usageError('--batch-size must be an integer from 1 to 50000', DAILY_USAGE);
  }

  const logger = stderrLogger(config);
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
  const runtime = await openRuntime(config, logger, { poolSize: 4 });
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
    await runtime.close();
  }
  console.log(formatSummary(summary));
  return 0;
}

export async function seedCommand({ config, argv }: CommandContext): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = await parse(argv, { synthetic: { type: 'string' }, seed: { type: 'string' }, date: { type: 'string' } }));
  } catch (e) {
    return usageError((e as Error).message, SEED_USAGE);
  }
  const count = Number(values.synthetic);
  if (values.synthetic === undefined || !Number.isInteger(count) || count < 1 || count > 10_000_000) {
    return usageError('--synthetic N is required: the number of companies, 1 to 10000000', SEED_USAGE);
  }
  const seed = values.seed === undefined ? undefined : Number(values.seed);
  if (seed !== undefined && (!Number.isSafeInteger(seed) || seed < 0)) return usageError('--seed must be a non-negative integer', SEED_USAGE);
  const date = (values.date as string | undefined) ?? new Date().toISOString().slice(0, 10);
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
