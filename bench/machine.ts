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
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
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

/** A process's CPU seconds so far (user + system), from /proc/PID/stat; null once it is gone. */
export function processCpuSeconds(pid: number): number | null {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // Fields after the name, from 0: utime 11, stime 12.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
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
  /** Page faults of the whole machine so far (/proc/vmstat pgfault). */
  machineFaults: number | null;
  /** KiB of free memory the guest has handed back to the host so far (virtio-balloon free page reporting; null: none). */
  reportedKib: number | null;
  freeKb: number | null;
}

function vmstat(name: string): number | null {
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(read('/proc/vmstat') ?? '');
  return m ? Number(m[1]) : null;
}

/** Free page reporting's running total, when the guest has it (a virtio balloon reporting free memory to the host). */
export function reportedKib(): number | null {
  const v = read('/sys/module/page_reporting/parameters/reported_kib');
  return v === null ? null : Number(v.trim());
}

const DAMON = '/sys/kernel/mm/damon/admin/kdamonds';

/**
 * Bytes the kernel's DAMON has paged out so far, over every `pageout` scheme of every running
 * kdamond: on this machine kind a scheme pages out memory not accessed for a minute, page cache
 * included, so a database's pages left alone that long are read from the disk again (docs/benchmarks.md,
 * "The machine"). Null when no kdamond runs, or its stats cannot be refreshed (not root).
 */
export function damonPagedOutBytes(): number | null {
  let total: number | null = null;
  try {
    for (const k of readdirSync(DAMON)) {
      if (k === 'nr_kdamonds' || read(`${DAMON}/${k}/state`)?.trim() !== 'on') continue;
      writeFileSync(`${DAMON}/${k}/state`, 'update_schemes_stats');
      for (const c of readdirSync(`${DAMON}/${k}/contexts`).filter((x) => x !== 'nr_contexts'))
        for (const sch of readdirSync(`${DAMON}/${k}/contexts/${c}/schemes`).filter((x) => x !== 'nr_schemes')) {
          const dir = `${DAMON}/${k}/contexts/${c}/schemes/${sch}`;
          if (read(`${dir}/action`)?.trim() !== 'pageout') continue;
          total = (total ?? 0) + Number(read(`${dir}/stats/sz_applied`) ?? 0);
        }
    }
  } catch {
    return null;
  }
  return total;
}

/** What the page cache lost and read back between two samples (pageCacheSample). */
export interface PageCacheSample {
  damonPagedOutBytes: number | null;
  /** Page-cache pages read again after their eviction (/proc/vmstat workingset_refault_file). */
  fileRefaults: number | null;
}

export function pageCacheSample(): PageCacheSample {
  return { damonPagedOutBytes: damonPagedOutBytes(), fileRefaults: vmstat('workingset_refault_file') };
}

/** MB paged out by DAMON and MB of evicted file pages read back between `before` and `after` (null where unknown). */
export function pageCacheDelta(before: PageCacheSample, after: PageCacheSample) {
  const mb = (a: number | null, b: number | null, unit: number) =>
    a === null || b === null ? null : Math.round(((b - a) * unit) / 2 ** 20);
  return {
    damon_paged_out_mb: mb(before.damonPagedOutBytes, after.damonPagedOutBytes, 1),
    file_refaults_mb: mb(before.fileRefaults, after.fileRefaults, 4096),
  };
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
    machineFaults: vmstat('pgfault'),
    reportedKib: reportedKib(),
    freeKb: meminfoKb('MemFree'),
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
    machine_page_faults_per_company:
      before.machineFaults === null || after.machineFaults === null
        ? null
        : Number(((after.machineFaults - before.machineFaults) / n).toFixed(2)),
    // Free memory handed back to the host during the run: cold again, ~first_touch_us_per_4k a
    // page when the guest next uses it (kernelReference).
    memory_reported_to_host_mb:
      before.reportedKib === null || after.reportedKib === null ? null : Math.round((after.reportedKib - before.reportedKib) / 1024),
    // Cold memory the machine took during the run, roughly: what free memory fell by, plus what
    // was handed back to the host meanwhile (and, being cold, taken again or still free). Every
    // process counts (the page cache too), not only this run's.
    cold_memory_taken_mb_estimate:
      before.reportedKib === null || after.reportedKib === null || before.freeKb === null || after.freeKb === null
        ? null
        : Math.round((before.freeKb - after.freeKb + after.reportedKib - before.reportedKib) / 1024),
    transparent_hugepages: thp,
    anon_hugepages_mb: Math.round((meminfoKb('AnonHugePages') ?? 0) / 1024),
    // Page-table isolation without PCID: every system call, page fault and interrupt flushes the
    // whole TLB (docs/benchmarks.md: measured, it is not what makes faults cost 20 µs here).
    ...pageTableIsolation(),
  };
}

/**
 * The CPU's model and whether the kernel isolates its page tables (PTI), with or without PCID.
 * On a machine with PTI and no PCID every system call and switch between processes flushes the
 * TLB: what sends a request or a database round trip costs about twice as much as without,
 * whatever the speed reference says (docs/benchmarks.md, "The machine"; measured in
 * docs/benchmarks-history.md, "On a machine with page-table isolation"). Printed first by the
 * benchmarks whose figures are made of system calls.
 */
export function pageTableIsolation(): { cpu_model: string | null; kernel_page_table_isolation: boolean; cpu_pcid: boolean } {
  const cpuinfo = read('/proc/cpuinfo') ?? '';
  return {
    cpu_model: /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1]?.trim() ?? null,
    kernel_page_table_isolation: /PTI/.test(read('/sys/devices/system/cpu/vulnerabilities/meltdown') ?? ''),
    cpu_pcid: /^flags\s*:.*\bpcid\b/m.test(cpuinfo),
  };
}

function cpuMicros(): number {
  const c = process.cpuUsage();
  return c.user + c.system;
}

/**
 * The first-touch probe, run in a child process so that its memory (up to 2 GiB) counts in no
 * benchmark's peak RSS: fresh 256 MiB buffers (malloc'd by mmap, untouched), every 4 KiB page
 * written once, until one is three times slower than the fastest so far or 4 GiB are touched.
 * Prints [wall µs a page, CPU µs a page] for each buffer.
 */
const FIRST_TOUCH_PROBE = `
const out = [];
let fastest = Infinity;
for (let i = 0; i < 16; i++) {
  const buf = Buffer.allocUnsafeSlow(256 * 2 ** 20);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let j = 0; j < buf.length; j += 4096) buf[j] = 1;
  const pages = buf.length / 4096;
  const c = process.cpuUsage(c0);
  const wall = ((performance.now() - t0) * 1000) / pages;
  out.push([wall, (c.user + c.system) / pages]);
  globalThis['held' + i] = buf;
  if (wall > 3 * Math.max(fastest, 1)) break;
  fastest = Math.min(fastest, wall);
}
console.log(JSON.stringify(out));`;

export interface KernelReference {
  /**
   * Wall µs to fault in a 4 KiB page of memory the host has not backed (the first 256 MiB three
   * times slower than the fastest; null when 4 GiB never reached such memory): what each new page of
   * Node.js's heap and buffers, and of PostgreSQL's buffers, page cache and WAL, costs here.
   */
  first_touch_us_per_4k: number | null;
  /** The same in the process's CPU time (the host's share shows as the guest's system time). */
  first_touch_cpu_us_per_4k: number | null;
  /** Wall µs a page for memory the guest freed recently and has not yet handed back (the fastest 256 MiB). */
  warm_touch_us_per_4k: number;
  /** MiB touched before the first cold 256 MiB: the guest's free memory not yet handed back to the host. */
  warm_pool_mb: number;
  file_extend_us_per_8k: number;
  /** Whether the guest hands its free memory back to the host (virtio-balloon free page reporting). */
  free_page_reporting: boolean;
}

/**
 * What the kernel charges for the two things a load does most besides computing: the first touch
 * of a 4 KiB page of memory (a minor page fault: a heap growing, `shared_buffers` or the page
 * cache used for the first time, a buffer malloc'd by mmap) and an 8 KB write() that extends a
 * file in the page cache (what PostgreSQL does for every new table, index or WAL page).
 *
 * On an ordinary VM a first touch costs well under 2 µs. On a Firecracker guest whose balloon
 * reports free memory to the host (the machine kind of docs/benchmarks.md), memory the host has
 * not backed (never touched, or freed in the guest and handed back a few seconds later) costs
 * the host's fault too: 15–20 µs a page, against about 2 µs for memory the guest freed recently.
 * The kernel hands out the recently freed memory first, so the probe (FIRST_TOUCH_PROBE)
 * touches fresh 256 MiB buffers until one is three times slower than the fastest (cold), and
 * reports the fastest (warm), the cold one and how much warm memory came first.
 */
export function kernelReference(): KernelReference {
  const touches = JSON.parse(execFileSync(process.execPath, ['-e', FIRST_TOUCH_PROBE], { encoding: 'utf8' })) as [number, number][];
  let extend = Infinity;
  const dir = mkdtempSync(join(tmpdir(), 'regwatch-kref-'));
  try {
    const page = Buffer.alloc(8192, 1);
    for (let round = 0; round < 3; round++) {
      const fd = openSync(join(dir, `f${round}`), 'w');
      const t = cpuMicros();
      for (let i = 0; i < 2048; i++) writeSync(fd, page);
      extend = Math.min(extend, (cpuMicros() - t) / 2048);
      closeSync(fd);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { ...firstTouchFigures(touches), file_extend_us_per_8k: Number(extend.toFixed(2)), free_page_reporting: reportedKib() !== null };
}

/**
 * The probe's buffers ([wall µs, CPU µs] a page, 256 MiB each, in the order touched) as figures:
 * the fastest is the warm price; the last is cold when three times slower than the fastest (the
 * probe stops there), and the buffers before it were warm memory.
 */
export function firstTouchFigures(
  touches: readonly [number, number][],
): Pick<KernelReference, 'first_touch_us_per_4k' | 'first_touch_cpu_us_per_4k' | 'warm_touch_us_per_4k' | 'warm_pool_mb'> {
  const last = touches.at(-1)!;
  const warm = Math.min(...touches.map((t) => t[0]));
  const cold = last[0] > 3 * Math.max(warm, 1) ? last : null;
  return {
    first_touch_us_per_4k: cold === null ? null : Number(cold[0].toFixed(2)),
    first_touch_cpu_us_per_4k: cold === null ? null : Number(cold[1].toFixed(2)),
    warm_touch_us_per_4k: Number(warm.toFixed(2)),
    warm_pool_mb: (cold === null ? touches.length : touches.length - 1) * 256,
  };
}
