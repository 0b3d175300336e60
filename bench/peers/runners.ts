/**
 * One echo call, done the way each peer host does it: a fresh instance per call where that is the
 * contract, the same request line on stdin, stdout collected. Each runner is built once per thread and
 * then called once per call; nothing here times anything (contestant.ts does).
 *
 * - `floor`: the cost any V8 host pays: a no-op WASI host that answers stdin from a buffer.
 * - `node-wasi`: Node's own `node:wasi`, a new `WASI` and instance per call (stdin from a file descriptor).
 * - `shim`: `@bjorn3/browser_wasi_shim`, a new `WASI` and instance per call (stdin from memory).
 * - `extism-fresh` / `extism-reused`: the Extism JS SDK (what hyper-mcp and mcp.run run on), a new plugin
 *   per call or one plugin reused, calling an echo plugin built from WAT at bench time.
 */
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Plugin } from '@extism/extism';

export type RunnerKind = 'floor' | 'node-wasi' | 'shim' | 'extism-fresh' | 'extism-reused';

export interface RunnerInput {
  kind: RunnerKind;
  /** The MCP echo guest (WASI command) for floor, node-wasi and shim; the Extism echo plugin otherwise. */
  module: WebAssembly.Module;
  requestLine: string;
}

/** Runs one call and resolves with the number of bytes the guest wrote. */
export type Runner = () => number | Promise<number>;

export async function makeRunner(input: RunnerInput): Promise<Runner> {
  switch (input.kind) {
    case 'floor': return floorRunner(input.module, Buffer.from(input.requestLine));
    case 'node-wasi': return nodeWasiRunner(input.module, input.requestLine);
    case 'shim': return shimRunner(input.module, Buffer.from(input.requestLine));
    // (Each peer's library is loaded only by the runner that uses it: node:wasi warns that it is experimental.)
    case 'extism-fresh': return extismRunner(input.module, input.requestLine, false);
    case 'extism-reused': return extismRunner(input.module, input.requestLine, true);
  }
}

class Exit extends Error {
  constructor(readonly code: number) {
    super('exit');
  }
}

function floorRunner(module: WebAssembly.Module, stdin: Uint8Array): Runner {
  return () => {
    let offset = 0;
    let written = 0;
    let memory!: WebAssembly.Memory;
    const view = () => new DataView(memory.buffer);
    const wasi: Record<string, (...args: number[]) => number> = {
      fd_read(_fd, iovs, iovsLen, nread) {
        const dv = view();
        let total = 0;
        for (let i = 0; i < iovsLen && offset < stdin.length; i += 1) {
          const ptr = dv.getUint32(iovs + i * 8, true);
          const len = dv.getUint32(iovs + i * 8 + 4, true);
          const n = Math.min(len, stdin.length - offset);
          new Uint8Array(memory.buffer, ptr, n).set(stdin.subarray(offset, offset + n));
          offset += n;
          total += n;
        }
        dv.setUint32(nread, total, true);
        return 0;
      },
      fd_write(_fd, iovs, iovsLen, nwritten) {
        const dv = view();
        let total = 0;
        for (let i = 0; i < iovsLen; i += 1) total += dv.getUint32(iovs + i * 8 + 4, true);
        written += total;
        dv.setUint32(nwritten, total, true);
        return 0;
      },
      fd_fdstat_get(_fd, buf) {
        new Uint8Array(memory.buffer, buf, 24).fill(0);
        view().setUint8(buf, 2);
        return 0;
      },
      fd_close: () => 0,
      fd_seek: () => 52,
      proc_exit(code) {
        throw new Exit(code);
      },
    };
    const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasi });
    memory = instance.exports.memory as WebAssembly.Memory;
    try {
      (instance.exports._start as () => void)();
    } catch (error) {
      if (!(error instanceof Exit)) throw error;
    }
    return written;
  };
}

/** node:wasi reads stdin from a descriptor: the request line sits in a file, opened afresh per call. */
async function nodeWasiRunner(module: WebAssembly.Module, requestLine: string): Promise<Runner> {
  const { WASI: NodeWasi } = await import('node:wasi');
  const stdinPath = join(tmpdir(), `subako-bench-stdin-${process.pid}-${Math.random().toString(36).slice(2)}`);
  writeFileSync(stdinPath, requestLine);
  const devNull = openSync('/dev/null', 'w');
  return () => {
    const stdin = openSync(stdinPath, 'r');
    try {
      const wasi = new NodeWasi({ version: 'preview1', args: ['echo'], env: {}, stdin, stdout: devNull, returnOnExit: true });
      const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasi.wasiImport });
      const code = wasi.start(instance);
      if (code !== 0) throw new Error(`node:wasi guest exited ${code}`);
      return 0;
    } finally {
      closeSync(stdin);
    }
  };
}

async function shimRunner(module: WebAssembly.Module, stdin: Uint8Array): Promise<Runner> {
  const { WASI: ShimWasi, OpenFile, File, ConsoleStdout } = await import('@bjorn3/browser_wasi_shim');
  return () => {
    let written = 0;
    const out = new ConsoleStdout((bytes: Uint8Array) => { written += bytes.length; });
    const wasi = new ShimWasi(['echo'], [], [new OpenFile(new File(stdin)), out, new ConsoleStdout(() => {})]);
    const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasi.wasiImport });
    try {
      wasi.start(instance as never);
    } catch (error) {
      // The shim ends a run that calls proc_exit by throwing its own exit error.
      if ((error as { code?: unknown }).code !== 0) throw error;
    }
    return written;
  };
}

/** Calls between resets of a reused Extism plugin (see extismRunner). */
const EXTISM_RESET_EVERY = 10_000;

async function extismRunner(module: WebAssembly.Module, requestLine: string, reuse: boolean): Promise<Runner> {
  const { default: createPlugin } = await import('@extism/extism');
  const open = () => createPlugin({ wasm: [{ module }] }, { useWasi: false, runInWorker: false });
  const shared: Plugin | null = reuse ? await open() : null;
  let sinceReset = 0;
  const once = async (): Promise<number> => {
    const plugin = shared ?? await open();
    try {
      // The SDK numbers the blocks calls allocate and does not reuse the numbers on a plugin that is kept:
      // its 16,384th call fails ("cannot assign to this block", measured with SDK 2.0); a reset starts again.
      if (shared && ++sinceReset >= EXTISM_RESET_EVERY) {
        sinceReset = 0;
        await shared.reset();
      }
      const output = await plugin.call('echo', requestLine);
      return output?.bytes().length ?? 0;
    } finally {
      if (!shared) await plugin.close();
    }
  };
  if (!shared) return once;
  // One plugin is one instance: its calls take turns (calls in flight at once on it corrupt its blocks, and a
  // reset under a call in flight fails it), as a host that keeps one plugin per tool would run them.
  let turn: Promise<unknown> = Promise.resolve();
  return () => {
    const mine = turn.then(once);
    turn = mine.catch(() => undefined);
    return mine;
  };
}

/** The Extism echo plugin: copies its input to its output through the Extism kernel imports. */
export const EXTISM_ECHO_WAT = `(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (func (export "echo") (result i32)
    (local $n i64) (local $out i64) (local $i i64)
    (local.set $n (call $input_length))
    (local.set $out (call $alloc (local.get $n)))
    (block $done (loop $copy
      (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
      (call $store_u8 (i64.add (local.get $out) (local.get $i)) (call $input_load_u8 (local.get $i)))
      (local.set $i (i64.add (local.get $i) (i64.const 1)))
      (br $copy)))
    (call $output_set (local.get $out) (local.get $n))
    (i32.const 0)))`;
