/**
 * A guest's `notifications/progress` lines, relayed to the caller's ProgressReporter. The guest is hostile:
 * it may print thousands of them, with any params. So a line counts only when its token is the one this call
 * gave (progressToken in the request's `_meta`) and its `progress` is a finite number above the last one;
 * anything else is ignored, never a crash. What counts is sent at most once per interval (default 50 ms),
 * and the last one is always sent: held back, it goes out when the interval has passed or when the call
 * answers (`flush`), before the result. The lines stay counted against stdout's limit by the sandbox, which
 * counts every byte before anyone reads a line. A reporter that throws is the caller's bug and does not
 * reach the call.
 */
import type { ProgressReporter } from '../tool.js';

export const PROGRESS_INTERVAL_MS = 50;
/** Longer messages are cut: a guest does not get to push large text through the caller's stream. */
export const MAX_GUEST_PROGRESS_MESSAGE_CHARS = 1000;

interface Update { done: number; total?: number; message?: string }

export interface ProgressRelayOptions {
  intervalMs?: number;
  /** Milliseconds, monotonic (tests give their own). */
  now?: () => number;
}

export class ProgressRelay {
  private readonly intervalMs: number;
  private readonly now: () => number;
  private last = Number.NEGATIVE_INFINITY;
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private held: Update | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(readonly token: string, private readonly reporter: ProgressReporter, options: ProgressRelayOptions = {}) {
    this.intervalMs = options.intervalMs ?? PROGRESS_INTERVAL_MS;
    this.now = options.now ?? (() => performance.now());
  }

  /** One notification's params, as the guest wrote them (untrusted). */
  offer(params: unknown): void {
    if (this.closed) return;
    const update = this.parse(params);
    if (update === null) return;
    this.last = update.done;
    const wait = this.lastSentAt + this.intervalMs - this.now();
    if (wait <= 0 && this.timer === null) return this.send(update);
    this.held = update;
    if (this.timer === null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        const held = this.held;
        this.held = null;
        if (held && !this.closed) this.send(held);
      }, Math.max(0, wait));
      this.timer.unref();
    }
  }

  /** The call answered: the held update goes out now, and nothing after. */
  flush(): void {
    const held = this.held;
    this.close();
    if (held) this.send(held);
  }

  /** The call ended without an answer worth reporting progress for (crash, cancel): drop what is held. */
  close(): void {
    this.closed = true;
    this.held = null;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private parse(params: unknown): Update | null {
    if (typeof params !== 'object' || params === null) return null;
    const { progressToken, progress, total, message } = params as Record<string, unknown>;
    if (progressToken !== this.token || typeof progress !== 'number' || !Number.isFinite(progress) || progress <= this.last) return null;
    const update: Update = { done: progress };
    if (typeof total === 'number' && Number.isFinite(total)) update.total = total;
    if (typeof message === 'string') update.message = message.slice(0, MAX_GUEST_PROGRESS_MESSAGE_CHARS);
    return update;
  }

  private send(update: Update): void {
    this.lastSentAt = this.now();
    try {
      this.reporter(update.done, update.total, update.message);
    } catch {
      // The reporter is the caller's; its failure is not the guest's call failing.
    }
  }
}
