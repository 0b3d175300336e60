/**
 * A first-come, first-served gate that lets a fixed number of tasks run at once. A waiter whose signal
 * aborts leaves the queue without running; a task that started keeps its place until it settles, even when
 * its caller stopped waiting for it, so the gate bounds the work actually in flight.
 */
export const GATE_STOPPED: unique symbol = Symbol('the wait was stopped');

export class WorkGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly size: number) {}

  /** Runs `task` once a place is free; GATE_STOPPED when `signal` aborts first (the task never runs). */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T | typeof GATE_STOPPED> {
    if (!(await this.enter(signal))) return GATE_STOPPED;
    try {
      return await task();
    } finally {
      this.leave();
    }
  }

  /** Tasks running now (for tests and diagnostics). */
  get busy(): number {
    return this.running;
  }

  private enter(signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    if (this.running < this.size) {
      this.running += 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const admit = (): void => {
        signal?.removeEventListener('abort', giveUp);
        this.running += 1;
        resolve(true);
      };
      const giveUp = (): void => {
        const at = this.waiting.indexOf(admit);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve(false);
      };
      this.waiting.push(admit);
      signal?.addEventListener('abort', giveUp, { once: true });
    });
  }

  private leave(): void {
    this.running -= 1;
    this.waiting.shift()?.();
  }
}
