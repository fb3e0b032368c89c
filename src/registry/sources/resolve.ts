import { createReadStream, statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import type { Config } from '../../config.ts';
import type { RegistrySource } from './source.ts';
import { createFileSource } from './file.ts';
import type { RegistrySourcesDeps } from './index.ts';

/**
 * Turns a source spec — `file:PATH`, `synthetic[:SEED]`, `krs`, `bir`, `ceidg`, `vat` — into a
 * RegistrySource and the key its daily runs are recorded under.
 */

/** The seed of the demo registry; `synthetic` without a seed continues it. */
export const DEFAULT_SYNTHETIC_SEED = 1;

const LIVE_SOURCES = ['krs', 'bir', 'ceidg', 'vat'] as const;
type LiveSourceName = (typeof LIVE_SOURCES)[number];

export class SourceSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourceSpecError';
  }
}

export interface ResolvedSource {
  source: RegistrySource;
  /** Identifies the input of a run: `file:/abs/path`, `synthetic:7`, `krs`. */
  sourceKey: string;
  /** Companies the run will read, when known cheaply (drives the progress ETA). */
  expectedTotal: number | null;
}

export interface ResolveOptions {
  config: Config;
  logger?: { warn(obj: object, msg: string): void };
  /** Count the lines of a `file:` source first (only worth it when progress is shown). */
  countFileLines?: boolean;
  /** Passed to the live connectors' factory (logger, clock, the VAT list's NIPs, …). */
  deps?: RegistrySourcesDeps;
}

export function isLiveSourceName(name: string): name is LiveSourceName {
  return (LIVE_SOURCES as readonly string[]).includes(name);
}

export async function resolveSource(spec: string, options: ResolveOptions): Promise<ResolvedSource> {
  const trimmed = spec.trim();
  if (trimmed.startsWith('file:')) {
    const path = resolvePath(trimmed.slice('file:'.length));
    if (trimmed.length === 'file:'.length) throw new SourceSpecError('file: needs a path, e.g. file:./day.ndjson');
    try {
      if (!statSync(path).isFile()) throw new Error('not a file');
    } catch {
      throw new SourceSpecError(`No such snapshot file: ${path}`);
    }
    const logger = options.logger;
    const source = createFileSource(path, {
      onError: (line, message) => logger?.warn({ file: path, line, problem: message }, 'snapshot line skipped'),
    });
    return { source, sourceKey: `file:${path}`, expectedTotal: options.countFileLines ? await countLines(path) : null };
  }
  if (trimmed === 'synthetic' || trimmed.startsWith('synthetic:')) {
    const seed = trimmed === 'synthetic' ? String(DEFAULT_SYNTHETIC_SEED) : trimmed.slice('synthetic:'.length).trim();
    if (seed === '' || seed.length > 100) throw new SourceSpecError('synthetic:SEED needs a seed of 1 to 100 characters');
    const { createSyntheticSource } = await import('./synthetic.ts');
    const source = createSyntheticSource({ seed, size: syntheticRegistrySize(options.config) });
    return { source, sourceKey: `synthetic:${seed}`, expectedTotal: null };
  }
  if (isLiveSourceName(trimmed)) {
    const { createRegistrySources, SourceConfigError } = await import('./index.ts');
    let sources: RegistrySource[];
    try {
      sources = createRegistrySources(options.config, [trimmed], options.deps ?? {});
    } catch (e) {
      // A missing *_API_URL is the caller's to fix, like a wrong spec.
      if (e instanceof SourceConfigError) throw new SourceSpecError(e.message);
      throw e;
    }
    const source = sources.find((s) => s.name === trimmed);
    if (!source) throw new SourceSpecError(`The ${trimmed} source is not configured (see its *_API_URL variables)`);
    return { source, sourceKey: trimmed, expectedTotal: null };
  }
  throw new SourceSpecError(`Unknown source "${spec}": use file:PATH, synthetic[:SEED], krs, bir, ceidg or vat`);
}

/** The synthetic registry is as large as the demo registry, so daily runs change the same companies. */
export function syntheticRegistrySize(config: Config): number {
  return config.demoCompanies > 0 ? config.demoCompanies : 50_000;
}

async function countLines(path: string): Promise<number> {
  let lines = 0;
  let last = 10;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    if (chunk.length > 0) last = chunk[chunk.length - 1]!;
  }
  return last === 10 ? lines : lines + 1;
}
