import type { Identifier } from '../model.ts';
import type { RegistrySource } from '../sources/source.ts';

/** What a daily run is given and what it reports while it runs (run.ts, pipeline.ts). */

export interface DailyProgress {
  processed: number;
  new: number;
  updated: number;
  deleted: number;
  events: number;
  elapsedMs: number;
  /** Companies a second since this attempt started. */
  rate: number;
  /** When the source's size is known. */
  expectedTotal: number | null;
  etaMs: number | null;
}

export interface RunDailyOptions {
  date: string;
  source: RegistrySource;
  /**
   * Read and prepare a `file:` source in a worker thread (see prepare-worker.ts). Default: when
   * the file is at least WORKER_MIN_FILE_BYTES (below which starting the worker costs more than
   * it saves), whether a first load, a full export or a delta of changed companies.
   */
  prepareInWorker?: boolean;
  /**
   * Build the secondary indexes once at the end instead of during the run (deferred-indexes.ts).
   * Only ever done for a run that starts on an empty registry. Default: when the run prepares in
   * the worker, i.e. a first load of a large file.
   */
  deferIndexes?: boolean;
  /**
   * On a first load (a run that starts on an empty registry), write new companies and their
   * identifiers with `COPY … FROM STDIN (FORMAT binary)` instead of INSERT (store/company-copy.ts):
   * the same rows, less of PostgreSQL's CPU a company. Default: true. Other runs always INSERT.
   */
  copyRows?: boolean;
  /** What identifies the input, so the same date can be run from another file. Default: the source's name. */
  sourceKey?: string;
  /**
   * Set by an on-demand import (src/registry/import.ts): the run is recorded as an import for this
   * identifier (daily_runs.kind), which statistics and metrics leave out.
   */
  importIdentifier?: Identifier;
  batchSize?: number;
  expectedTotal?: number | null;
  onProgress?: (p: DailyProgress) => void;
  signal?: AbortSignal;
  /** `info`, when given, receives the run's timeline: its start, the first batch committed, the last, each deferred index built. */
  logger?: { warn(obj: object, msg: string): void; info?(obj: object, msg: string): void };
  now?: () => number;
}
