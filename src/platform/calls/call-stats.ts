/**
 * The call log's overview over a window (the last hour, the last day): the store counts (store `callStats`);
 * here the window becomes a moment and a bucket size, and the store's buckets — only those with calls — become
 * every bucket of the window, empty ones as zeros, so a chart of them has one point per minute (or hour). Pure.
 */
import type { CallStats, CallStatsQuery, CallStatsRow } from '../store/index.js';

export const STATS_WINDOWS = ['hour', 'day'] as const;
export type StatsWindow = (typeof STATS_WINDOWS)[number];

/** Each window's length and bucket: an hour by minutes, a day by hours. */
const WINDOWS: Record<StatsWindow, { ms: number; bucketMs: number; bucketChars: CallStatsQuery['bucketChars'] }> = {
  hour: { ms: 3_600_000, bucketMs: 60_000, bucketChars: 16 },
  day: { ms: 86_400_000, bucketMs: 3_600_000, bucketChars: 13 },
};

export interface CallStatsWindow {
  window: StatsWindow;
  /** The start of the first bucket (the bucket `now - window` falls in) and the end of the last (now). */
  since: string;
  until: string;
  bucketMs: number;
  /** Every bucket of the window, oldest first: its start, its calls and errors. */
  buckets: { start: string; calls: number; errors: number }[];
  byTool: CallStatsRow[];
  byAgent: CallStatsRow[];
}

/** What the store is asked for the window ending at `now`: calls from the start of the first bucket on. */
export function statsQuery(window: StatsWindow, now: number): CallStatsQuery {
  const { ms, bucketMs, bucketChars } = WINDOWS[window];
  return { since: new Date(Math.floor((now - ms) / bucketMs) * bucketMs).toISOString(), bucketChars };
}

/** The store's answer laid out over every bucket of the window. */
export function statsWindow(window: StatsWindow, now: number, stats: CallStats): CallStatsWindow {
  const { bucketMs, bucketChars } = WINDOWS[window];
  const since = statsQuery(window, now).since;
  const counted = new Map(stats.buckets.map((b) => [b.start, b]));
  const buckets: CallStatsWindow['buckets'] = [];
  for (let at = Date.parse(since); at <= now; at += bucketMs) {
    const start = new Date(at).toISOString();
    const found = counted.get(start.slice(0, bucketChars));
    buckets.push({ start, calls: found?.calls ?? 0, errors: found?.errors ?? 0 });
  }
  return { window, since, until: new Date(now).toISOString(), bucketMs, buckets, byTool: stats.byTool, byAgent: stats.byAgent };
}
