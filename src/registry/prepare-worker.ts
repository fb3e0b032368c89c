import { isMainThread, parentPort, workerData, type Worker } from 'node:worker_threads';
import { startTsWorker } from '../lib/ts-worker.ts';
import type { Identifier } from './model.ts';
import { canonicalEntry, isSkip, newRowFields, type PreparedEntry } from './prepare.ts';
import { contentHash } from './store/content-hash.ts';
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
 * A chunk crosses as bytes and one short string, and the bytes are transferred, not copied. The
 * bytes hold each entry's canonical JSON in UTF-8 followed, when the row was built, by U+001F and
 * the row's other fields (store.ts companyRowFields): exactly a new company's row as PostgreSQL
 * receives it (store.ts companyRow), so the main thread sends it on without decoding, copying
 * into a string or encoding it again. `offsets` gives each entry's [start, end of JSON, end] in
 * the bytes. The string holds, per entry (joined with U+001E, fields with U+001F), the
 * fingerprint, the identifiers (`TYPE=value,…`) and a tail: empty when the row was built, `-`
 * when only the JSON was prepared, or `!` and the JSON of the error that deriving the row raised.
 * A skipped snapshot has an empty fingerprint and the JSON of its error message (or null) as its
 * tail. JSON text never holds a raw control character, and the row's fields hold none but their
 * separators (store.ts), so the separators cannot occur inside a field.
 */
const ENTRY = '\x1e';
const FIELD = '\x1f';
const FIELD_BYTE = 0x1f;

/** A chunk as it crosses to the main thread (see above). */
interface WireChunk {
  bytes: ArrayBuffer;
  length: number;
  meta: string;
  offsets: Int32Array;
}

class ChunkWriter {
  bytes = Buffer.allocUnsafeSlow(1 << 21);
  length = 0;
  meta: string[] = [];
  offsets: number[] = [];

  /** Room for `chars` more UTF-16 code units written as UTF-8 (at most 3 bytes each). */
  private reserve(chars: number): void {
    const need = this.length + chars * 3 + 1;
    if (need <= this.bytes.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(need, this.bytes.length * 2));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }

  add(entry: ReturnType<typeof canonicalEntry>, withColumns: boolean): void {
    if (isSkip(entry)) {
      const e = entry.error;
      this.meta.push(FIELD + FIELD + JSON.stringify(e === null ? null : e instanceof Error ? e.message : String(e)));
      this.offsets.push(0, 0, 0);
      return;
    }
    const start = this.length;
    this.reserve(entry.canonicalJson.length);
    this.length += this.bytes.write(entry.canonicalJson, this.length);
    const jsonEnd = this.length;
    // The content hash of the bytes just written: the text is not encoded a second time to hash it.
    const fingerprint = contentHash(this.bytes.subarray(start, jsonEnd)).toString('base64');
    let tail = '-';
    if (withColumns) {
      const { fields, error } = newRowFields(entry.canonical, fingerprint);
      if (fields !== null) {
        this.reserve(fields.length);
        this.bytes[this.length++] = FIELD_BYTE;
        this.length += this.bytes.write(fields, this.length);
        tail = '';
      } else tail = '!' + JSON.stringify(error);
    }
    let idents = '';
    for (const id of entry.identifiers) idents += (idents === '' ? '' : ',') + id.type + '=' + id.value;
    this.meta.push(fingerprint + FIELD + idents + FIELD + tail);
    this.offsets.push(start, jsonEnd, this.length);
  }

  /** The chunk as a message, and a fresh writer's state. */
  take(): WireChunk {
    const out = {
      bytes: this.bytes.buffer as ArrayBuffer,
      length: this.length,
      meta: this.meta.join(ENTRY),
      offsets: Int32Array.from(this.offsets),
    };
    this.bytes = Buffer.allocUnsafeSlow(this.bytes.length);
    this.length = 0;
    this.meta = [];
    this.offsets = [];
    return out;
  }
}

function identifiersFromWire(text: string): Identifier[] {
  const out: Identifier[] = [];
  for (const pair of text.split(',')) {
    const eq = pair.indexOf('=');
    out.push({ type: pair.slice(0, eq) as Identifier['type'], value: pair.slice(eq + 1) });
  }
  return out;
}

function chunkFromWire(m: WireChunk): PreparedEntry[] {
  const out: PreparedEntry[] = [];
  const bytes = Buffer.from(m.bytes, 0, m.length);
  const { meta, offsets } = m;
  let pos = 0;
  for (let k = 0; pos < meta.length || k === 0; k++) {
    let end = meta.indexOf(ENTRY, pos);
    if (end < 0) end = meta.length;
    const a = meta.indexOf(FIELD, pos);
    const b = meta.indexOf(FIELD, a + 1);
    const tail = meta.slice(b + 1, end);
    if (a === pos) {
      const message = JSON.parse(tail) as string | null;
      out.push({ skipped: true, error: message === null ? null : new Error(message) });
    } else {
      const start = offsets[3 * k]!;
      const jsonEnd = offsets[3 * k + 1]!;
      out.push({
        identifiers: identifiersFromWire(meta.slice(a + 1, b)),
        canonical: null,
        canonicalJson: null,
        jsonBytes: bytes.subarray(start, jsonEnd),
        fingerprint: meta.slice(pos, a),
        fields: null,
        row: tail === '' ? bytes.subarray(start, offsets[3 * k + 2]!) : null,
        columnsError: tail.startsWith('!') ? (JSON.parse(tail.slice(1)) as string) : null,
        attempts: 0,
        seq: 0,
      });
    }
    pos = end + 1;
  }
  return out;
}

type LogLine = [kind: 'error' | 'warning', line: number, message: string];

type ToMain =
  | ({ type: 'chunk'; logs: LogLine[] } & WireChunk)
  | { type: 'done'; logs: LogLine[] }
  | { type: 'fatal'; message: string; code: string | undefined };

interface WorkerInput {
  role: typeof ROLE;
  /** Build each company's row (prepare.ts prepareEntry `withColumns`): worth it unless most lines are unchanged (a full export). */
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
 * A worker started ahead of its input (prestartPrepareWorker): what it said and did before
 * prepareFileInWorker took it is kept here (its module failing to load, say) and replayed then.
 */
interface Prestarted {
  worker: Worker;
  early: ToMain[];
  error: unknown;
  exitCode: number | null;
  detach(): void;
}

let prestarted: Prestarted | null = null;

/**
 * Starts the file-preparing worker before its input is known, so that its thread's start and
 * tsx compiling and loading its modules (0.3–0.5 s; docs/benchmarks.md, reg-day) overlap what the
 * command does before the run reads its file: opening the database, the run's lock and record.
 * The next prepareFileInWorker takes it; discardPrestartedWorker ends it if none does. It does not
 * keep the process alive while it waits.
 */
export function prestartPrepareWorker(): void {
  if (prestarted !== null) return;
  const worker = startTsWorker(import.meta.url, { role: ROLE, deferred: true });
  const held: Prestarted = { worker, early: [], error: null, exitCode: null, detach: () => {} };
  const onMessage = (m: ToMain) => held.early.push(m);
  const onError = (e: unknown) => (held.error ??= e);
  const onExit = (code: number) => (held.exitCode = code);
  worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  held.detach = () => worker.off('message', onMessage).off('error', onError).off('exit', onExit);
  worker.unref();
  prestarted = held;
}

/** Ends a pre-started worker no run took. */
export async function discardPrestartedWorker(): Promise<void> {
  const held = prestarted;
  prestarted = null;
  if (held === null) return;
  held.detach();
  await held.worker.terminate();
}

export function prepareFileInWorker(path: string, date: string, options: FileSourceOptions, withColumns = true): PreparedChunks {
  const input: WorkerInput = {
    role: ROLE,
    withColumns,
    path,
    date,
    reportErrors: options.onError !== undefined,
    reportWarnings: options.onWarning !== undefined,
  };
  const held = prestarted;
  prestarted = null;
  // This module's code, through tsx like the main thread (src/lib/ts-worker.ts); a pre-started
  // worker gets its input as its first message.
  const worker = held?.worker ?? startTsWorker(import.meta.url, { ...input });
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
  const fail = (e: unknown) => {
    failure ??= e;
    waiting?.reject(e);
    waiting = null;
  };
  const exited = (code: number) => {
    if (finished) return;
    fail(new Error(`The file-preparing worker stopped (exit code ${code}) before the end of ${path}`));
  };
  if (held !== null) {
    held.detach();
    queue.push(...held.early);
    if (held.error !== null) failure = held.error;
    worker.ref();
    if (held.exitCode !== null) exited(held.exitCode);
    else worker.postMessage({ ...input });
  }
  worker.on('message', deliver);
  worker.on('error', fail);
  worker.on('exit', exited);

  const receive = (): Promise<ToMain> => {
    const m = queue.shift();
    if (m) return Promise.resolve(m);
    if (failure) return Promise.reject(failure);
    return new Promise((resolve, reject) => {
      waiting = { resolve, reject };
    });
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
      return chunkFromWire(m);
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
  const writer = new ChunkWriter();
  let count = 0;
  const flush = async () => {
    while (credit <= 0)
      await new Promise<void>((r) => {
        wake = r;
      });
    credit--;
    const chunk = writer.take();
    port.postMessage({ type: 'chunk', ...chunk, logs } satisfies ToMain, [chunk.bytes, chunk.offsets.buffer as ArrayBuffer]);
    count = 0;
    logs = [];
  };
  try {
    for await (const raw of source.snapshotsForDate(input.date)) {
      // The file source's snapshots are freshly parsed and held by nothing else.
      writer.add(canonicalEntry(raw, true), input.withColumns);
      if (++count >= CHUNK) await flush();
    }
    if (count > 0) await flush();
    port.postMessage({ type: 'done', logs } satisfies ToMain);
  } catch (e) {
    port.postMessage({
      type: 'fatal',
      message: e instanceof Error ? e.message : String(e),
      code: (e as { code?: string }).code,
    } satisfies ToMain);
  }
  // The main thread terminates the worker once it has read the last message.
}

if (!isMainThread && (workerData as { role?: string } | null)?.role === ROLE) {
  // A pre-started worker waits for its input, the first message (prestartPrepareWorker).
  if ((workerData as { deferred?: boolean }).deferred === true) parentPort!.once('message', (input: WorkerInput) => void runWorker(input));
  else void runWorker(workerData as WorkerInput);
}
