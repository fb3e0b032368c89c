/**
 * The main thread's CPU to turn a batch's new-company rows into what is sent: binary COPY data
 * (src/registry/store/company-copy.ts companyCopyData) against the INSERT path's two binary
 * `text[]` parameters (company-rows.ts rowsParameter), from the rows the file-preparing worker
 * builds for the first lines of a load file. Run under the bench lock:
 *
 *   flock /tmp/bench.lock node --import tsx bench/company-copy-encode.ts --file /var/tmp/regcopy-load-1m.ndjson [--lines 20000]
 */
import { argValue } from './registry-db.ts';
import { prepareFileInWorker } from '../src/registry/prepare-worker.ts';
import { isSkip } from '../src/registry/prepare.ts';
import { companyCopyData, identifierCopyData } from '../src/registry/store/company-copy.ts';
import { rowsParameter, type NewCompanyRow } from '../src/registry/store/company-rows.ts';
import { storedIdentifierKey } from '../src/lib/identifiers.ts';

const file = argValue('file', '');
if (file === '') throw new Error('--file PATH is required');
const lines = Number(argValue('lines', '20000'));
const BATCH = 2000;

const rows: NewCompanyRow[] = [];
const identifiers: { key: string; companyId: string }[] = [];
const chunks = prepareFileInWorker(file, '2026-11-01', {}, true);
while (rows.length < lines) {
  const chunk = await chunks.next();
  if (chunk === null) break;
  for (const e of chunk) {
    if (isSkip(e) || e.row === null) continue;
    const id = String(rows.length + 1);
    rows.push({ id, row: e.row });
    for (const x of e.identifiers) identifiers.push({ key: storedIdentifierKey(x.type, x.value), companyId: id });
  }
}
await chunks.close();

function cpuPerRow(encode: (batch: NewCompanyRow[]) => void, rounds: number): number {
  const cpu0 = process.cpuUsage();
  for (let r = 0; r < rounds; r++) for (let i = 0; i < rows.length; i += BATCH) encode(rows.slice(i, i + BATCH));
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / (rounds * rows.length);
}

const result: Record<string, number[]> = { copy_us: [], insert_us: [], identifiers_copy_us: [] };
// Warm up both, then alternate.
cpuPerRow((b) => companyCopyData('bench:load', '2026-11-01', b), 2);
cpuPerRow((b) => rowsParameter(b), 2);
for (let k = 0; k < 3; k++) {
  result.copy_us!.push(Number(cpuPerRow((b) => companyCopyData('bench:load', '2026-11-01', b), 5).toFixed(2)));
  result.insert_us!.push(Number(cpuPerRow((b) => rowsParameter(b), 5).toFixed(2)));
  const cpu0 = process.cpuUsage();
  for (let r = 0; r < 5; r++)
    for (let i = 0; i < identifiers.length; i += 3 * BATCH) identifierCopyData(identifiers.slice(i, i + 3 * BATCH));
  const cpu = process.cpuUsage(cpu0);
  result.identifiers_copy_us!.push(Number(((cpu.user + cpu.system) / (5 * rows.length)).toFixed(2)));
}
console.log(
  JSON.stringify({ rows: rows.length, loadavg: (await import('node:os')).loadavg().map((x) => Number(x.toFixed(2))), ...result }),
);
