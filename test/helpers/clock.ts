/**
 * A clock for tests that follows real time and can be moved forward, so a test reaches an expiry by
 * advancing it instead of sleeping (everything else — timestamps, ordering — keeps behaving as with the
 * system clock).
 */
import type { Clock } from '../../src/common/index.js';

export class SteppedClock implements Clock {
  private ahead = 0;

  now(): number {
    return Date.now() + this.ahead;
  }

  /** Moves the clock `ms` milliseconds forward. */
  advance(ms: number): void {
    this.ahead += ms;
  }
}
