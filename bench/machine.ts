/**
 * What a registry figure depends on, read from Linux around a measured run, so that two machines'
 * figures can be told apart by cause (docs/benchmarks.md, "What the figures depend on"):
 *
 * - the whole machine's CPU split over the run: user, system, iowait and steal (time the
 *   hypervisor gave to other guests: on a shared virtual machine, the first suspect);
 * - the PostgreSQL cluster's processes: user and system CPU, minor page faults (a fresh cluster's
 *   first touch of `shared_buffers` shows here, as system time) and bytes written to storage;
 * - the kernel's writeback state at the start (dirty and writeback memory: writes another
 *   process still owes), transparent huge pages, and the disk's write rate over the run;
 * - whether the kernel isolates its page tables (PTI) on a CPU without PCID, which makes every
 *   kernel entry flush the TLB; kernelReference() measures what a page fault and a file
 *   extension cost.
 */
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TICKS = 100;

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

interface CpuTicks {
  user: number;
  nice: number;
  system: number;
  idle: number;
  iowait: number;
  irq: number;
  softirq: number;
  steal: number;
}

function machineTicks(): CpuTicks | null {
  const line = read('/proc/stat')
    ?.split('\n')
    .find((l) => l.startsWith('cpu '));
  if (!line) return null;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
  return { user: user!, nice: nice!, system: system!, idle: idle!, iowait: iowait!, irq: irq!, softirq: softirq!, steal: steal ?? 0 };
}

function meminfoKb(name: string): number | null {
  const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(read('/proc/meminfo') ?? '');
  return m ? Number(m[1]) : null;
}

/** Sectors written by every whole disk (not partitions), from /proc/diskstats. */
function diskSectorsWritten(): number {
  let total = 0;
  for (const line of (read('/proc/diskstats') ?? '').split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || !/^(sd[a-z]+|vd[a-z]+|xvd[a-z]+|nvme\d+n\d+)$/.test(f[2]!)) continue;
    total += Number(f[9]);
  }
  return total;
}

interface ClusterProcs {
  userS: number;
  systemS: number;
  minorFaults: number;
  writeBytes: number | null;
}

/** The postmaster and its children, found by the data directory's postmaster.pid. */
function clusterProcs(clusterDir: string | null): ClusterProcs | null {
  if (!clusterDir) return null;
  const postmaster = Number(read(join(clusterDir, 'postmaster.pid'))?.split('\n')[0]);
  if (!postmaster) return null;
  const out: ClusterProcs = { userS: 0, systemS: 0, minorFaults: 0, writeBytes: 0 };
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = read(`/proc/${entry}/stat`);
    if (!stat) continue;
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(entry);
    if (pid !== postmaster && Number(f[1]) !== postmaster) continue;
    // Fields after the name, from 0: minflt 7, cminflt 8, utime 11, stime 12, cutime 13, cstime 14.
    out.userS += Number(f[11]) / TICKS;
    out.systemS += Number(f[12]) / TICKS;
    out.minorFaults += Number(f[7]);
    if (pid === postmaster) {
      // Children already reaped (closed connections, autovacuum workers).
      out.userS += Number(f[13]) / TICKS;
      out.systemS += Number(f[14]) / TICKS;
      out.minorFaults += Number(f[8]);
    }
    const io = read(`/proc/${entry}/io`);
    const wb = io ? /^write_bytes:\s+(\d+)/m.exec(io) : null;
    if (wb && out.writeBytes !== null) out.writeBytes += Number(wb[1]);
    else out.writeBytes = null;
  }
  return out;
}

export interface MachineSample {
  at: number;
  ticks: CpuTicks | null;
  sectors: number;
  cluster: ClusterProcs | null;
  dirtyKb: number | null;
  writebackKb: number | null;
}

/** A sample to diff against a later one; `clusterDir` is the embedded cluster's data directory (null: external server). */
export function sampleMachine(clusterDir: string | null): MachineSample {
  return {
    at: performance.now(),
    ticks: machineTicks(),
    sectors: diskSectorsWritten(),
    cluster: clusterProcs(clusterDir),
    dirtyKb: meminfoKb('Dirty'),
    writebackKb: meminfoKb('Writeback'),
  };
}

/** What changed between two samples, per unit of work (`n` companies) where it makes sense. */
export function explainRun(before: MachineSample, after: MachineSample, n: number, clusterDir: string | null) {
  const seconds = (after.at - before.at) / 1000;
  let machine: Record<string, number> | null = null;
  if (before.ticks && after.ticks) {
    const d = Object.fromEntries(
      Object.keys(before.ticks).map((k) => [k, after.ticks![k as keyof CpuTicks] - before.ticks![k as keyof CpuTicks]]),
    ) as unknown as CpuTicks;
    const total = Object.values(d).reduce((a, b) => a + b, 0) || 1;
    const pct = (x: number) => Number(((100 * x) / total).toFixed(1));
    machine = {
      user_pct: pct(d.user + d.nice),
      system_pct: pct(d.system + d.irq + d.softirq),
      iowait_pct: pct(d.iowait),
      steal_pct: pct(d.steal),
      idle_pct: pct(d.idle),
    };
  }
  const c0 = before.cluster;
  const c1 = after.cluster ?? clusterProcs(clusterDir);
  const thp = /\[(\w+)\]/.exec(read('/sys/kernel/mm/transparent_hugepage/enabled') ?? '')?.[1] ?? null;
  return {
    machine_cpu: machine,
    pg_user_us: c0 && c1 ? Math.round(((c1.userS - c0.userS) * 1e6) / n) : null,
    pg_system_us: c0 && c1 ? Math.round(((c1.systemS - c0.systemS) * 1e6) / n) : null,
    pg_minor_faults_per_company: c0 && c1 ? Number(((c1.minorFaults - c0.minorFaults) / n).toFixed(2)) : null,
    pg_written_mb:
      c0 && c1 && c0.writeBytes !== null && c1.writeBytes !== null ? Math.round((c1.writeBytes - c0.writeBytes) / 2 ** 20) : null,
    disk_write_mb_per_s: Number((((after.sectors - before.sectors) * 512) / 2 ** 20 / seconds).toFixed(1)),
    dirty_mb_at_start: before.dirtyKb === null ? null : Math.round(before.dirtyKb / 1024),
    writeback_mb_at_start: before.writebackKb === null ? null : Math.round(before.writebackKb / 1024),
    transparent_hugepages: thp,
    anon_hugepages_mb: Math.round((meminfoKb('AnonHugePages') ?? 0) / 1024),
    // Page-table isolation without PCID: every system call, page fault and interrupt flushes the
    // whole TLB, and the user code after it pays for the misses (docs/benchmarks.md).
    kernel_page_table_isolation: /PTI/.test(read('/sys/devices/system/cpu/vulnerabilities/meltdown') ?? ''),
    cpu_pcid: /^flags\s*:.*\bpcid\b/m.test(read('/proc/cpuinfo') ?? ''),
  };
}

function cpuMicros(): number {
  const c = process.cpuUsage();
  return c.user + c.system;
}

/**
 * What the kernel charges for the two things a load does most besides computing, in CPU µs (best
 * of three; lower is faster): the first touch of a fresh 4 KB page of anonymous memory (a minor
 * page fault: a heap growing, `shared_buffers` used for the first time, a buffer malloc'd by mmap)
 * and an 8 KB write() that extends a file in the page cache (what PostgreSQL does for every new
 * table, index or WAL page). On an ordinary virtual machine both are around a microsecond or two;
 * on one whose guest kernel runs without hardware virtualisation support (nested or
 * paravirtualised page tables) they cost ten to fifty times that, and so do PostgreSQL's and
 * Node.js's system time (docs/benchmarks.md, "What the figures depend on").
 */
export function kernelReference(): { first_touch_us_per_4k: number; file_extend_us_per_8k: number } {
  let touch = Infinity;
  let extend = Infinity;
  const dir = mkdtempSync(join(tmpdir(), 'regwatch-kref-'));
  try {
    // Every round's buffer is kept until the end, so no round reuses memory another touched
    // (with malloc tuned to keep freed memory, a freed buffer would come back already faulted in).
    const held: Buffer[] = [];
    for (let round = 0; round < 3; round++) {
      const bytes = 32 * 2 ** 20;
      const buf = Buffer.allocUnsafeSlow(bytes); // malloc'd, untouched: pages faulted in by fill()
      held.push(buf);
      let t = cpuMicros();
      buf.fill(round + 1);
      touch = Math.min(touch, (cpuMicros() - t) / (bytes / 4096));
      const fd = openSync(join(dir, `f${round}`), 'w');
      const page = buf.subarray(0, 8192);
      t = cpuMicros();
      for (let i = 0; i < 2048; i++) writeSync(fd, page);
      extend = Math.min(extend, (cpuMicros() - t) / 2048);
      closeSync(fd);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { first_touch_us_per_4k: Number(touch.toFixed(2)), file_extend_us_per_8k: Number(extend.toFixed(2)) };
}
