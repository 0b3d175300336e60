/**
 * Steady state: many calls at 8 in flight through one FunctionHost, reporting the memory and descriptors of
 * this process and its sandbox process at the start and the end (they should stay flat) and p99 per window
 * of calls (it should not drift). BENCH_SOAK_CALLS sets the count (default 100,000).
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { FunctionHost } from '../src/function/index.js';
import type { Row } from './run.js';
import { median, summarize } from './stats.js';

interface Footprint {
  rssMiB: number;
  fds: number;
}

/** This process and its direct children (the sandbox process), from /proc. */
function footprint(): Footprint {
  const pids = [process.pid];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name may hold spaces or parentheses: fields start after its last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid) pids.push(Number(entry));
    } catch {
      // expected: a process that ended while we listed /proc
    }
  }
  let rssKiB = 0;
  let fds = 0;
  for (const pid of pids) {
    try {
      const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      rssKiB += Number(rss?.[1] ?? 0);
      fds += readdirSync(`/proc/${pid}/fd`).length;
    } catch {
      // expected: the child ended between the two reads
    }
  }
  return { rssMiB: rssKiB / 1024, fds };
}

/** How much higher the later half's p99 may be than the earlier half's and still count as no drift (one slow window moves neither median). */
const SOAK_DRIFT_CEILING = 1.25;

export async function soakBench(host: FunctionHost, loaded: Awaited<ReturnType<FunctionHost['load']>>, tmpDir: string): Promise<Row[]> {
  const total = Number(process.env.BENCH_SOAK_CALLS ?? 100_000);
  const windows = 10;
  const perWindow = Math.max(1, Math.floor(total / windows));
  // Warm up first, so that the start figures include the workers' and JIT's one-time growth.
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let i = 0; i < 200; i += 1) await host.call(loaded, 'echo', { warm: i }, { tmpDir });
  }));
  global.gc?.();
  const start = footprint();
  const p99s: number[] = [];
  for (let w = 0; w < windows; w += 1) {
    const samples: number[] = [];
    let issued = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (issued < perWindow) {
        issued += 1;
        const begin = performance.now();
        const outcome = await host.call(loaded, 'echo', { w }, { tmpDir });
        if (outcome.status !== 'ok') throw new Error(`soak call ${outcome.status}: ${outcome.crash?.message ?? ''}`);
        samples.push(performance.now() - begin);
      }
    }));
    p99s.push(summarize(samples).p99);
  }
  global.gc?.();
  const end = footprint();
  const first = p99s[0];
  const last = p99s[p99s.length - 1];
  // Drift is a trend, not one slow window (a shared machine has those): the halves' medians, taken against each other.
  const half = Math.floor(windows / 2);
  const earlier = median(p99s.slice(0, half));
  const later = median(p99s.slice(windows - half));
  const drift = later / earlier;
  return [
    { name: `soak: ${perWindow * windows} calls at 8 in flight, RSS start`, value: start.rssMiB, unit: 'MiB' },
    { name: 'soak: RSS end', value: end.rssMiB, unit: 'MiB', against: { name: 'start', value: start.rssMiB, ratio: end.rssMiB / start.rssMiB } },
    { name: 'soak: open descriptors start', value: start.fds, unit: 'fds' },
    { name: 'soak: open descriptors end', value: end.fds, unit: 'fds', against: { name: 'start', value: start.fds, ratio: end.fds / start.fds }, target: { text: 'flat', met: end.fds <= start.fds, by: end.fds > start.fds ? `${end.fds - start.fds} fds` : undefined } },
    { name: 'soak: p99 first window', value: first, unit: 'ms' },
    { name: 'soak: p99 last window', value: last, unit: 'ms', against: { name: 'first window', value: first, ratio: last / first } },
    { name: 'soak: p99 worst window / best window', value: Math.max(...p99s) / Math.min(...p99s), unit: '×' },
    {
      name: 'soak: p99, median of the later windows', value: later, unit: 'ms', against: { name: 'the earlier windows', value: earlier, ratio: drift },
      target: { text: 'without drift (≤ 1.25×)', met: drift <= SOAK_DRIFT_CEILING, by: drift > SOAK_DRIFT_CEILING ? `×${(drift / SOAK_DRIFT_CEILING).toFixed(2)}` : undefined },
    },
  ];
}
