/**
 * How a guest's end becomes a RunOutcome: pure, so every rule is tested without starting a worker.
 */
import { ProcExit } from '../wasi/first-call.js';
import type { RunOutcome } from './types.js';

/** Thrown from the stdout callback to unwind a guest that passed its stdout cap. */
export class StdoutLimitReached extends Error {
  constructor() {
    super('stdout limit reached');
    this.name = 'StdoutLimitReached';
  }
}

export type GuestEnd = { returned: number } | { threw: unknown };

export interface EndFacts {
  /** The guest passed its stdout cap at some point (even if it then caught the unwind). */
  stdoutLimitHit: boolean;
  /**
   * The instrumented `__subako_grow_failed` global was 1: a memory.grow was refused. It only explains a run that
   * then trapped (C's abort() and Rust's allocation failure trap too); a guest that handled the refusal and
   * exited chose its own status, whatever it is.
   */
  growFailed: boolean;
  memoryBytes: number;
}

const MIB = 1024 * 1024;

function memoryMessage(memoryBytes: number): string {
  const cap = memoryBytes % MIB === 0 ? `${memoryBytes / MIB} MiB` : `${memoryBytes} bytes`;
  return `the module needed more memory than its cap of ${cap}`;
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/** The outcome of a run whose guest returned from `_start`, called proc_exit, or threw. */
export function classifyEnd(end: GuestEnd, facts: EndFacts): RunOutcome {
  if (facts.stdoutLimitHit) return { kind: 'stdout_limit' };
  if ('returned' in end) return { kind: 'exit', code: end.returned };
  const error = end.threw;
  if (error instanceof ProcExit) return classifyEnd({ returned: error.code }, facts);
  if (error instanceof StdoutLimitReached) return { kind: 'stdout_limit' };
  if (facts.growFailed) return { kind: 'out_of_memory', message: memoryMessage(facts.memoryBytes) };
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return { kind: 'trap', message: 'call stack exhausted' };
  }
  return { kind: 'trap', message: errorMessage(error) };
}

/** The outcome when `new WebAssembly.Instance` itself failed (memory, linking, or a trapping start function). */
export function classifyInstantiateFailure(error: unknown, memoryBytes: number): RunOutcome {
  if (error instanceof WebAssembly.LinkError) {
    return { kind: 'trap', message: `the module cannot be linked: ${errorMessage(error)}` };
  }
  if (error instanceof RangeError && /memory/i.test(error.message)) {
    return { kind: 'out_of_memory', message: `${memoryMessage(memoryBytes)} (${errorMessage(error)})` };
  }
  if (error instanceof ProcExit) return { kind: 'exit', code: error.code };
  return { kind: 'trap', message: errorMessage(error) };
}

/** A worker thread that died under a run, not stopped by us: out of memory when V8 said so, else a trap. */
export function workerDeathOutcome(reason: string): RunOutcome {
  return /out of memory/i.test(reason) ? { kind: 'out_of_memory', message: reason } : { kind: 'trap', message: reason };
}
