/**
 * A small in-process runner for WASI guests in tests: instantiates a module with WasiHost on the main
 * thread, stdin from a buffer (or any StdinSource), sleep through Atomics.wait on a SharedArrayBuffer
 * (allowed on Node's main thread), stdout and stderr collected, a write budget that counts.
 */
import { readFileSync } from 'node:fs';
import { WasiHost } from '../../src/wasi/host.js';
import { WASI_MODULE } from '../../src/wasi/preview1.js';
import type { PreopenSpec, StdinSource, WriteBudget } from '../../src/wasi/types.js';

const modules = new Map<string, WebAssembly.Module>();

export function loadModule(path: string): WebAssembly.Module {
  let module = modules.get(path);
  if (module === undefined) {
    module = new WebAssembly.Module(readFileSync(path));
    modules.set(path, module);
  }
  return module;
}

/** Stdin from a complete buffer: never blocks, end of file after the last byte. */
export class BufferStdin implements StdinSource {
  private offset = 0;
  constructor(private readonly data: Uint8Array) {}
  read(max: number): Uint8Array {
    const chunk = this.data.subarray(this.offset, this.offset + max);
    this.offset += chunk.length;
    return chunk.slice();
  }
  waitReadable(): boolean {
    return true;
  }
}

/**
 * Stdin that arrives in chunks, as from a pipe: after a chunk is drained the next one has "not arrived"
 * (waitReadable(0) is false) until a blocking read or a wait with a timeout lets it in. `blockingReads`
 * counts the reads that had to wait: a host that blocks while it already holds data shows up here.
 */
export class ChunkedStdin implements StdinSource {
  blockingReads = 0;
  private current: Uint8Array | undefined;
  private next = 0;
  constructor(private readonly chunks: Uint8Array[]) {}
  private arrive(): void {
    this.current = this.next < this.chunks.length ? this.chunks[this.next++] : new Uint8Array(0);
  }
  read(max: number): Uint8Array {
    if (this.current === undefined || this.current.length === 0) {
      if (this.next >= this.chunks.length) return new Uint8Array(0);
      this.blockingReads++;
      this.arrive();
    }
    const current = this.current as Uint8Array;
    const chunk = current.slice(0, max);
    this.current = current.subarray(chunk.length);
    return chunk;
  }
  waitReadable(timeoutMs: number): boolean {
    if (this.current !== undefined && this.current.length > 0) return true;
    if (this.next >= this.chunks.length) return true; // end of file is "readable"
    if (timeoutMs === 0) return false;
    this.arrive();
    return true;
  }
}

export class CountingBudget implements WriteBudget {
  used = 0;
  constructor(readonly limit = 1 << 30) {}
  tryConsume(bytes: number): boolean {
    if (this.used + bytes > this.limit) return false;
    this.used += bytes;
    return true;
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
export const sleep = (ms: number): void => {
  Atomics.wait(sleeper, 0, 0, ms);
};

export interface RunOptions {
  args?: string[];
  env?: string[];
  preopens?: PreopenSpec[];
  stdin?: string | Uint8Array | StdinSource;
  budget?: WriteBudget;
  /** Extra import modules (e.g. for WAT guests that import helpers). */
  extraImports?: WebAssembly.Imports;
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  stdoutChunks: Uint8Array[];
}

const decoder = new TextDecoder();

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

export function runWasi(module: WebAssembly.Module | string, options: RunOptions = {}): RunResult {
  const compiled = typeof module === 'string' ? loadModule(module) : module;
  const stdout: Uint8Array[] = [];
  const stderr: Uint8Array[] = [];
  const stdinOption = options.stdin ?? '';
  const stdin = typeof stdinOption === 'string' ? new BufferStdin(new TextEncoder().encode(stdinOption))
    : stdinOption instanceof Uint8Array ? new BufferStdin(stdinOption) : stdinOption;
  const host = new WasiHost({
    args: options.args ?? ['guest'],
    env: options.env ?? [],
    preopens: options.preopens ?? [],
    stdin,
    stdout: (bytes) => stdout.push(bytes),
    stderr: (bytes) => stderr.push(bytes),
    writeBudget: options.budget ?? new CountingBudget(),
    sleep,
  });
  try {
    const instance = new WebAssembly.Instance(compiled, { [WASI_MODULE]: host.imports, ...options.extraImports });
    const exitCode = host.start(instance);
    return { exitCode, stdout: decoder.decode(concat(stdout)), stderr: decoder.decode(concat(stderr)), stdoutChunks: stdout };
  } finally {
    host.close();
  }
}
