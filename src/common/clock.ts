/**
 * The time, as something a component is given rather than reads: expiry (sessions' TTL, OAuth refresh
 * margins, cached remote toolboxes) is decided against `clock.now()`, so a test moves time forward instead of
 * sleeping until something expires.
 */
export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
}

export const systemClock: Clock = Object.freeze({ now: () => Date.now() });

/** The clock's time as an ISO 8601 string (what the store keeps). */
export function isoAt(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}
