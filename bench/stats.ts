/** Small statistics for the benchmarks: percentiles over sorted samples. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export interface Summary {
  p50: number;
  p99: number;
  mean: number;
  n: number;
}

export function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, x) => sum + x, 0) / Math.max(1, sorted.length);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean, n: sorted.length };
}

/** Times `fn` `count` times after `warmup` untimed runs; returns milliseconds per run. */
export async function sample(count: number, warmup: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < warmup; i += 1) await fn();
  const samples: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return samples;
}

/**
 * Times each of `fns` `count` times, taking them in turn (the order rotating each round), after `warmup`
 * untimed rounds: figures compared with one another see the same moments of a noisy host.
 */
export async function interleaved(count: number, warmup: number, fns: Array<() => Promise<unknown>>): Promise<number[][]> {
  for (let i = 0; i < warmup; i += 1) for (const fn of fns) await fn();
  const times: number[][] = fns.map(() => []);
  for (let i = 0; i < count; i += 1) {
    for (let k = 0; k < fns.length; k += 1) {
      const which = (i + k) % fns.length;
      const start = performance.now();
      await fns[which]();
      times[which].push(performance.now() - start);
    }
  }
  return times;
}
