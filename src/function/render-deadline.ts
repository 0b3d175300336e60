/**
 * When rendering must stop: the call's deadline (rendering gets the time the guest left of it) or the
 * caller cancelling the call. One AbortSignal says both, with the reason a note gives the model.
 */
export interface RenderOptions {
  /** The `performance.now()` time the call must end by; images not rendered by then become a note. */
  deadline?: number;
  /** The call's own signal: when it aborts, the images not rendered yet become a note. */
  signal?: AbortSignal;
}

export const RENDER_STOPPED: unique symbol = Symbol('rendering stopped');

export class RenderDeadline {
  private readonly controller = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout> | undefined;
  private why: string | null = null;
  private readonly outer: AbortSignal | undefined;
  private readonly onCancel = (): void => this.stop('the call was cancelled');

  constructor(options: RenderOptions, now = performance.now()) {
    this.outer = options.signal;
    if (this.outer?.aborted) this.onCancel();
    else this.outer?.addEventListener('abort', this.onCancel, { once: true });
    if (options.deadline !== undefined && this.why === null) {
      const left = options.deadline - now;
      const why = "the call's deadline passed before they were rendered";
      if (left <= 0) this.stop(why);
      else this.timer = setTimeout(() => this.stop(why), left);
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why rendering stopped, or null while it may go on. */
  get reason(): string | null {
    return this.why;
  }

  /** The work's value, or RENDER_STOPPED as soon as rendering must stop (the work itself is not undone). */
  race<T>(work: Promise<T>): Promise<T | typeof RENDER_STOPPED> {
    const signal = this.controller.signal;
    if (signal.aborted) {
      work.catch(() => {}); // abandoned work: its late failure has no one to tell, and must not go unhandled
      return Promise.resolve(RENDER_STOPPED);
    }
    return new Promise((resolve, reject) => {
      const stopped = (): void => resolve(RENDER_STOPPED);
      signal.addEventListener('abort', stopped, { once: true });
      work.then(
        (value) => { signal.removeEventListener('abort', stopped); resolve(value); },
        (err) => { signal.removeEventListener('abort', stopped); reject(err); },
      );
    });
  }

  /** Frees the timer and the listener on the call's signal. */
  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.outer?.removeEventListener('abort', this.onCancel);
  }

  private stop(why: string): void {
    if (this.why !== null) return;
    this.why = why;
    this.controller.abort(why);
  }
}
