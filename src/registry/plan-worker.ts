import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { CompanySnapshot, DetectedEvent, Identifier } from './model.ts';
import type { CompanyColumns } from './store.ts';
import { mergeIntoStored, type MergeOutcome } from './prepare.ts';

/**
 * Step 3 of a batch (merge, serialise, hash, diff, derive) for the companies that changed, in a
 * worker thread: on a detection day that is most of the main thread's CPU (about 80 µs a changed
 * company), which otherwise cannot overlap the batch statements it sends. Used for batches with
 * many changed companies; a few are merged on the main thread (the worker takes half a second
 * to start).
 *
 * Texts cross the threads, never object graphs (structured cloning costs more than the work):
 * a request is one string, entries joined with U+001E and fields with U+001F (stored hash,
 * stored JSON, incoming JSON); an answer is one string of entries `S` (same content), `E` plus a
 * JSON error message, or `C` + merged JSON, hash, and a JSON array [events, columns, new
 * identifiers]. JSON text never holds a raw control character.
 */

const ROLE = 'regwatch-plan';
const ENTRY = '\x1e';
const FIELD = '\x1f';

export interface MergeRequest {
  storedHash: Buffer;
  storedJson: string;
  incomingJson: string;
}

export type MergeAnswer = MergeOutcome | { kind: 'error'; message: string };

export function mergeRequestText(requests: readonly MergeRequest[]): string {
  return requests.map((r) => r.storedHash.toString('base64') + FIELD + r.storedJson + FIELD + r.incomingJson).join(ENTRY);
}

export function answerText(requestText: string): string {
  const out: string[] = [];
  for (const entry of requestText.split(ENTRY)) {
    const a = entry.indexOf(FIELD);
    const b = entry.indexOf(FIELD, a + 1);
    try {
      const outcome = mergeIntoStored(
        JSON.parse(entry.slice(a + 1, b)) as CompanySnapshot,
        JSON.parse(entry.slice(b + 1)) as CompanySnapshot,
        Buffer.from(entry.slice(0, a), 'base64'),
      );
      out.push(outcome.kind === 'same'
        ? 'S'
        : 'C' + outcome.json + FIELD + outcome.hash.toString('base64') + FIELD + JSON.stringify([outcome.events, outcome.columns, outcome.newIdentifiers]));
    } catch (e) {
      out.push('E' + JSON.stringify(e instanceof Error ? e.message : String(e)));
    }
  }
  return out.join(ENTRY);
}

export function answersFromText(text: string): MergeAnswer[] {
  return text.split(ENTRY).map((entry): MergeAnswer => {
    if (entry[0] === 'S') return { kind: 'same' };
    if (entry[0] === 'E') return { kind: 'error', message: JSON.parse(entry.slice(1)) as string };
    const a = entry.indexOf(FIELD);
    const b = entry.indexOf(FIELD, a + 1);
    const [events, columns, newIdentifiers] = JSON.parse(entry.slice(b + 1)) as [DetectedEvent[], CompanyColumns, Identifier[]];
    return { kind: 'changed', json: entry.slice(1, a), hash: Buffer.from(entry.slice(a + 1, b), 'base64'), events, columns, newIdentifiers };
  });
}

export interface MergeWorker {
  merge(requests: readonly MergeRequest[]): Promise<MergeAnswer[]>;
  close(): Promise<void>;
}

/** Same bootstrap as prepare-worker.ts: workers do not inherit tsx's loader hooks. */
const BOOTSTRAP = `
  const { workerData, parentPort } = require('node:worker_threads');
  (async () => {
    (await import(workerData.tsxApi)).register();
    await import(workerData.entry);
    parentPort.postMessage({ ready: true });
  })().catch((e) => parentPort.postMessage({ fatal: String(e && e.stack || e) }));
`;

export function startMergeWorker(): MergeWorker {
  const worker = new Worker(BOOTSTRAP, { eval: true, workerData: { role: ROLE, entry: import.meta.url, tsxApi: import.meta.resolve('tsx/esm/api') } });
  let pending: { resolve: (text: string) => void; reject: (e: unknown) => void } | null = null;
  let failure: Error | null = null;
  let closed = false;
  const fail = (e: Error) => {
    failure ??= e;
    pending?.reject(failure);
    pending = null;
  };
  worker.on('message', (m: { ready?: true; fatal?: string; text?: string }) => {
    if (m.fatal !== undefined) fail(new Error(m.fatal));
    else if (m.text !== undefined) {
      const p = pending;
      pending = null;
      p?.resolve(m.text);
    }
  });
  worker.on('error', (e) => fail(e));
  worker.on('exit', (code) => { if (!closed) fail(new Error(`The merging worker stopped (exit code ${code})`)); });
  return {
    async merge(requests) {
      if (requests.length === 0) return [];
      if (failure) throw failure;
      const text = await new Promise<string>((resolve, reject) => {
        pending = { resolve, reject };
        worker.postMessage(mergeRequestText(requests));
      });
      return answersFromText(text);
    },
    async close() {
      closed = true;
      await worker.terminate();
    },
  };
}

if (!isMainThread && (workerData as { role?: string } | null)?.role === ROLE) {
  parentPort!.on('message', (text: string) => parentPort!.postMessage({ text: answerText(text) }));
}
