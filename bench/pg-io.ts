/**
 * What PostgreSQL wrote during a measured run, from its own statistics (PostgreSQL 18's
 * pg_stat_wal, pg_stat_io, pg_stat_checkpointer, pg_stat_database): WAL bytes and full-page
 * images, checkpoints begun, and the bytes written by kind of process and purpose (a backend's
 * own evictions, the checkpointer, the WAL writer, index builds' bulk writes, temporary files).
 * Beside the kernel's count in bench/machine.ts (every write(), WAL pages rewritten as they fill
 * included), it says where the bytes came from (docs/benchmarks.md, "What the figures depend on").
 */
import { sql } from 'kysely';
import type { Db } from '../src/db/database.ts';

export interface PgIoSample {
  walBytes: number;
  walFpi: number;
  checkpoints: number;
  tempBytes: number;
  /** Bytes written (writes and file extensions) by `backend_type/object/context`. */
  written: Record<string, number>;
}

/** A sample to diff with pgIoDelta; null where the statistics are missing (a server before PostgreSQL 18). */
export async function samplePgIo(db: Db): Promise<PgIoSample | null> {
  try {
    const wal = await sql<{ wal_bytes: string; wal_fpi: string }>`SELECT wal_bytes::text, wal_fpi::text FROM pg_stat_wal`.execute(db);
    const cp = await sql<{ n: string }>`SELECT (num_timed + num_requested)::text AS n FROM pg_stat_checkpointer`.execute(db);
    const temp = await sql<{ b: string }>`SELECT coalesce(sum(temp_bytes), 0)::text AS b FROM pg_stat_database`.execute(db);
    const io = await sql<{ k: string; b: string }>`
      SELECT backend_type || '/' || object || '/' || context AS k,
        (coalesce(write_bytes, 0) + coalesce(extend_bytes, 0))::text AS b
      FROM pg_stat_io WHERE coalesce(write_bytes, 0) + coalesce(extend_bytes, 0) > 0`.execute(db);
    return {
      walBytes: Number(wal.rows[0]!.wal_bytes),
      walFpi: Number(wal.rows[0]!.wal_fpi),
      checkpoints: Number(cp.rows[0]!.n),
      tempBytes: Number(temp.rows[0]!.b),
      written: Object.fromEntries(io.rows.map((r) => [r.k, Number(r.b)])),
    };
  } catch {
    return null;
  }
}

const MB = 2 ** 20;

/** What was written between two samples: MB, full-page images a company (`n`), checkpoints begun. */
export function pgIoDelta(before: PgIoSample | null, after: PgIoSample | null, n: number) {
  if (!before || !after) return null;
  const written: Record<string, number> = {};
  for (const [k, b] of Object.entries(after.written)) {
    const mb = Math.round((b - (before.written[k] ?? 0)) / MB);
    if (mb > 0) written[k] = mb;
  }
  return {
    wal_mb: Math.round((after.walBytes - before.walBytes) / MB),
    wal_fpi_per_company: Number(((after.walFpi - before.walFpi) / n).toFixed(2)),
    checkpoints: after.checkpoints - before.checkpoints,
    temp_mb: Math.round((after.tempBytes - before.tempBytes) / MB),
    written_mb_by_process: written,
  };
}
