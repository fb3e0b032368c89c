import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { RegistryExecutor } from '../store/executor.ts';
import { registrySize } from '../store/companies-repo.ts';

/** How the worker thread prepares a file source's day (pipeline.ts). */

/** About 6,000 companies: below that, starting the worker (0.3–0.5 s: tsx and its modules) costs more than it saves. */
export const WORKER_MIN_FILE_BYTES = 8_000_000;

/** Bytes of the file read to estimate its lines. */
const LINE_SAMPLE_BYTES = 1 << 20;

/** The file's lines, estimated from its size and the line length of its first megabyte. */
export function estimateLines(path: string, size: number): number {
  const sample = Buffer.allocUnsafe(Math.min(size, LINE_SAMPLE_BYTES));
  let read = 0;
  const fd = openSync(path, 'r');
  try {
    read = readSync(fd, sample, 0, sample.length, 0);
  } finally {
    closeSync(fd);
  }
  let newlines = 0;
  for (let i = sample.indexOf(0x0a, 0); i >= 0 && i < read; i = sample.indexOf(0x0a, i + 1)) newlines++;
  return newlines === 0 ? 1 : Math.round((size * newlines) / read);
}

/**
 * A full export (every company of the source, most of them unchanged since the last run) rather
 * than a delta (the changed ones): at least half as many lines as the registry has companies.
 * The worker then leaves the lines' rows underived: most lines only have their fingerprint
 * compared (pipeline.ts).
 */
export function isFullExport(lines: number, companies: number): boolean {
  return lines * 2 >= companies;
}

export async function looksLikeFullExport(db: RegistryExecutor, path: string, size: number): Promise<boolean> {
  try {
    return isFullExport(estimateLines(path, size), await registrySize(db));
  } catch {
    // Unreadable now: the stream reports it as it always has.
    return false;
  }
}

export function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    // The stream reports a missing file as it always has.
    return 0;
  }
}
