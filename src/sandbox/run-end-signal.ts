/**
 * The AbortSignal a bridge handler gets for its run: aborted when the run ends, for any reason. Made only
 * when a handler asks (most runs never do); asked for after the end, it is aborted already, as it would
 * have been.
 */
export class RunEndSignal {
  private controller: AbortController | null = null;
  private ended = false;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.ended) this.controller.abort();
    }
    return this.controller.signal;
  }

  end(): void {
    this.ended = true;
    this.controller?.abort();
  }
}
