/**
 * The calls of tasks this process runs, each with the controller that stops it. A task is cancelled in the store
 * (by whichever replica was asked): the one running its call stops it at once when that is this process, and
 * otherwise within `everyMs`, asking the store which of its tasks ended meanwhile — one query a tick, and only
 * while it runs any.
 */
export class RunningTasks {
  private readonly running = new Map<string, AbortController>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;

  constructor(
    private readonly ended: (ids: readonly string[]) => Promise<string[]>,
    private readonly everyMs: number,
    private readonly report: (error: Error) => void,
  ) {}

  has(id: string): boolean {
    return this.running.has(id);
  }

  add(id: string, controller: AbortController): void {
    this.running.set(id, controller);
    if (this.timer === null) {
      this.timer = setInterval(() => void this.tick(), this.everyMs);
      this.timer.unref();
    }
  }

  remove(id: string): void {
    this.running.delete(id);
    if (this.running.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** Stops the task's call here, when it runs here. */
  stop(id: string, why: string): void {
    this.running.get(id)?.abort(new Error(why));
  }

  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.running.size === 0) return;
    this.ticking = true;
    try {
      for (const id of await this.ended([...this.running.keys()])) this.stop(id, 'its task was cancelled');
    } catch (err) {
      // The store out of reach: a cancellation is seen on a later tick.
      this.report(err instanceof Error ? err : new Error(String(err)));
    } finally {
      this.ticking = false;
    }
  }
}
