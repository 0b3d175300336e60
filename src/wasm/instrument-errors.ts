/**
 * The rewrite's refusals, in a file of their own: the sandbox reports them (sandbox/errors.ts) in processes that
 * never load the rewrite itself (a sandbox process, a host whose modules come from the prepared cache).
 */
import { SubakoError } from '../errors.js';

/** The module asks for more memory up front than the cap allows: the run is out of memory before it starts. */
export class MemoryCapError extends SubakoError {
  readonly initialPages: number;
  readonly capPages: number;

  constructor(initialPages: number, capPages: number) {
    super('out_of_memory', `The module starts with ${initialPages} pages of memory (${initialPages * 64} KiB), more than the cap of ${capPages} pages (${capPages * 64} KiB). Lower its initial memory (e.g. -Wl,--initial-memory) or raise the memory limit.`);
    this.initialPages = initialPages;
    this.capPages = capPages;
  }
}

/** The module is not one the rewrite can handle (malformed; an imported, shared, 64-bit or second memory; an imported or 64-bit table). */
export class InstrumentError extends SubakoError {
  constructor(message: string) {
    super('instrument.unsupported', message);
  }
}
