import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { Identifier } from './model.ts';
import { isSkip, prepareEntry, type PreparedEntry } from './prepare.ts';
import { createFileSource, type FileSourceOptions } from './sources/file.ts';

/**
 * A `file:` source read, parsed, validated, prepared (canonical JSON, hash) and given its search
 * columns in a worker thread. That is most of a load's CPU in Node.js (about 90 µs of 120 per
 * company); on the main thread it could not overlap the batch statements the main thread sends,
 * and on two cores PostgreSQL takes the rest. Only text and small objects cross the threads: the
 * canonical JSON, identifiers, fingerprint and columns; the main thread parses the JSON again
 * only for a company that already exists (to merge it).
 *
 * Flow control keeps memory flat: the worker sends chunks of CHUNK entries and stops when
 * CREDIT chunks are unread; each chunk the main thread takes gives one credit back.
 */

const ROLE = 'regwatch-file-prepare';
const CHUNK = 500;
const CREDIT = 6;

/**
 * A chunk crosses as one string: structured cloning of objects cost about 30 µs an entry (more
 * than preparing it), one string a few. Entries are joined with U+001E, an entry's fields with
 * U+001F: the canonical JSON, the fingerprint, the identifiers (`TYPE=value,…`), then the row's
 * other fields (which hold U+001F themselves, so they come last) or `!` and the JSON of the error
 * that deriving them raised. JSON text never holds a raw control character, and the row fields
 * hold no U+001E (store.ts), so the separators cannot occur inside a field. A skipped snapshot
 * has an empty JSON and ends with the JSON of its error message, or null.
 */
const ENTRY = '\x1e';
const FIELD = '\x1f';

function entryToWire(entry: PreparedEntry): string {
  if (isSkip(entry)) {
    const e = entry.error;
    return FIELD + FIELD + FIELD + JSON.stringify(e === null ? null : e instanceof Error ? e.message : String(e));
  }
  let idents = '';
  for (const id of entry.identifiers) idents += (idents === '' ? '' : ',') + id.type + '=' + id.value;
  const rest = entry.fields ?? '!' + JSON.stringify(entry.columnsError);
  return entry.canonicalJson + FIELD + entry.fingerprint + FIELD + idents + FIELD + rest;
}

function identifiersFromWire(text: string): Identifier[] {
  const out: Identifier[] = [];
  for (const pair of text.split(',')) {
    const eq = pair.indexOf('=');
    out.push({ type: pair.slice(0, eq) as Identifier['type'], value: pair.slice(eq + 1) });
  }
  return out;
}

function chunkFromWire(text: string): PreparedEntry[] {
  const out: PreparedEntry[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf(ENTRY, start);
    if (end < 0) end = text.length;
    const a = text.indexOf(FIELD, start);
    const b = text.indexOf(FIELD, a + 1);
    const c = text.indexOf(FIELD, b + 1);
    if (a === start) {
      const message = JSON.parse(text.slice(c + 1, end)) as string | null;
      out.push({ skipped: true, error: message === null ? null : new Error(message) });
    } else {
      const rest = text.slice(c + 1, end);
      const failed = rest.startsWith('!');
      out.push({
        identifiers: identifiersFromWire(text.slice(b + 1, c)),
        canonical: null,
        canonicalJson: text.slice(start, a),
        fingerprint: text.slice(a + 1, b),
        // The fingerprint is the canonical JSON's hash in base64.
        hash: Buffer.from(text.slice(a + 1, b), 'base64'),
        fields: failed ? null : rest,
        columnsError: failed ? (JSON.parse(rest.slice(1)) as string) : null,
        attempts: 0,
        seq: 0,
      });
    }
    start = end + 1;
  }
  return out;
}

type LogLine = [kind: 'error' | 'warning', line: number, message: string];

type ToMain =
  | { type: 'chunk'; text: string; logs: LogLine[] }
  | { type: 'done'; logs: LogLine[] }
  | { type: 'fatal'; message: string; code: string | undefined };

interface WorkerInput {
  role: typeof ROLE;
  /** Build each company's row (prepare.ts prepareEntry `withColumns`): worth it when most companies are new. */
  withColumns: boolean;
  path: string;
  date: string;
  reportErrors: boolean;
  reportWarnings: boolean;
}

export interface PreparedChunks {
  /** The next chunk of entries in stream order; null when the file is done. */
  next(): Promise<PreparedEntry[] | null>;
  close(): Promise<void>;
}

/** Errors thrown by the worker keep their message and code (ENOENT for a missing file). */
class WorkerFailure extends Error {
  code: string | undefined;
  constructor(message: string, code: string | undefined) {
    super(message);
    this.code = code;
  }
}

/**
 * The worker runs this module's code through tsx like the main thread. Loader hooks are not
 * inherited by an eval worker (neither tsx's `register()`, as the `regwatch` binary uses, nor
 * `--import tsx`), so the bootstrap registers tsx itself.
 */
function bootstrap(): string {
  return `
    const { workerData, parentPort } = require('node:worker_threads');
    (async () => {
      if (workerData.tsxApi) (await import(workerData.tsxApi)).register();
      await import(workerData.entry);
    })().catch((e) => parentPort.postMessage({ type: 'fatal', message: String(e && e.stack || e), code: e && e.code }));
  `;
}

export function prepareFileInWorker(path: string, date: string, options: FileSourceOptions, withColumns = true): PreparedChunks {
  const input: WorkerInput & { entry: string; tsxApi: string } = {
    role: ROLE,
    withColumns,
    path,
    date,
    reportErrors: options.onError !== undefined,
    reportWarnings: options.onWarning !== undefined,
    entry: import.meta.url,
    tsxApi: import.meta.resolve('tsx/esm/api'),
  };
  const worker = new Worker(bootstrap(), { eval: true, workerData: input });
  const queue: ToMain[] = [];
  let waiting: { resolve: (m: ToMain) => void; reject: (e: unknown) => void } | null = null;
  let failure: unknown = null;
  let finished = false;

  const deliver = (m: ToMain) => {
    if (waiting) {
      const w = waiting;
      waiting = null;
      w.resolve(m);
    } else queue.push(m);
  };
  worker.on('message', deliver);
  worker.on('error', (e) => {
    failure = e;
    waiting?.reject(e);
    waiting = null;
  });
  worker.on('exit', (code) => {
    if (finished) return;
    const e = new Error(`The file-preparing worker stopped (exit code ${code}) before the end of ${path}`);
    failure ??= e;
    waiting?.reject(e);
    waiting = null;
  });

  const receive = (): Promise<ToMain> => {
    const m = queue.shift();
    if (m) return Promise.resolve(m);
    if (failure) return Promise.reject(failure);
    return new Promise((resolve, reject) => { waiting = { resolve, reject }; });
  };

  const replay = (logs: LogLine[]) => {
    for (const [kind, line, message] of logs) (kind === 'error' ? options.onError : options.onWarning)?.(line, message);
  };

  return {
    async next() {
      if (finished) return null;
      const m = await receive();
      if (m.type === 'fatal') {
        finished = true;
        await worker.terminate();
        throw new WorkerFailure(m.message, m.code);
      }
      replay(m.logs);
      if (m.type === 'done') {
        finished = true;
        await worker.terminate();
        return null;
      }
      worker.postMessage(1);
      return chunkFromWire(m.text);
    },
    async close() {
      finished = true;
      await worker.terminate();
    },
  };
}

async function runWorker(input: WorkerInput): Promise<void> {
  const port = parentPort!;
  let credit = CREDIT;
  let wake: (() => void) | null = null;
  port.on('message', (n: number) => {
    credit += n;
    wake?.();
    wake = null;
  });
  let logs: LogLine[] = [];
  const source = createFileSource(input.path, {
    onError: input.reportErrors ? (line, message) => logs.push(['error', line, message]) : undefined,
    onWarning: input.reportWarnings ? (line, message) => logs.push(['warning', line, message]) : undefined,
  });
  let entries: string[] = [];
  const flush = async () => {
    while (credit <= 0) await new Promise<void>((r) => { wake = r; });
    credit--;
    port.postMessage({ type: 'chunk', text: entries.join(ENTRY), logs } satisfies ToMain);
    entries = [];
    logs = [];
  };
  try {
    for await (const raw of source.snapshotsForDate(input.date)) {
      // The file source's snapshots are freshly parsed and held by nothing else.
      entries.push(entryToWire(prepareEntry(raw, input.withColumns, true)));
      if (entries.length >= CHUNK) await flush();
    }
    if (entries.length > 0) await flush();
    port.postMessage({ type: 'done', logs } satisfies ToMain);
  } catch (e) {
    port.postMessage({ type: 'fatal', message: e instanceof Error ? e.message : String(e), code: (e as { code?: string }).code } satisfies ToMain);
  }
  // The main thread terminates the worker once it has read the last message.
}

if (!isMainThread && (workerData as { role?: string } | null)?.role === ROLE) void runWorker(workerData as WorkerInput);
