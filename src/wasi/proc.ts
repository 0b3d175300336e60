/**
 * Arguments and environment (exactly the caller's strings, UTF-8, NUL-terminated), proc_exit,
 * proc_raise, sched_yield and the sock_* functions (linked, but no socket is ever handed out, so every
 * open descriptor answers ENOTSOCK and a closed one EBADF).
 */
import { Errno } from './errno.js';
import { ProcExit } from './types.js';
import type { FunctionFamily, WasiContext } from './context.js';

const encoder = new TextEncoder();

/** A list of strings laid out once as preview 1 wants them: each followed by a NUL, back to back. */
interface StringList {
  offsets: number[];
  bytes: Uint8Array;
}

function layOut(strings: readonly string[]): StringList {
  const encoded = strings.map((s) => encoder.encode(s));
  const bytes = new Uint8Array(encoded.reduce((sum, e) => sum + e.length + 1, 0));
  const offsets: number[] = [];
  let offset = 0;
  for (const e of encoded) {
    offsets.push(offset);
    bytes.set(e, offset);
    offset += e.length + 1; // the NUL is already there
  }
  return { offsets, bytes };
}

export function procFunctions(ctx: WasiContext): FunctionFamily {
  const { memory, table } = ctx;
  // Laid out on first use in a run, again when a reused host starts a run with other options.
  let laidOutFor: WasiContext['options'] | undefined;
  let args: StringList = { offsets: [], bytes: new Uint8Array(0) };
  let env: StringList = args;
  function lists(): void {
    if (laidOutFor === ctx.options) return;
    args = layOut(ctx.options.args);
    env = layOut(ctx.options.env);
    laidOutFor = ctx.options;
  }

  function sizes(list: StringList, countPtr: number, sizePtr: number): number {
    memory.check(countPtr >>> 0, 4);
    memory.check(sizePtr >>> 0, 4);
    memory.setU32(countPtr >>> 0, list.offsets.length);
    memory.setU32(sizePtr >>> 0, list.bytes.length);
    return Errno.SUCCESS;
  }

  function get(list: StringList, pointersPtr: number, bufPtr: number): number {
    pointersPtr >>>= 0;
    bufPtr >>>= 0;
    memory.check(pointersPtr, list.offsets.length * 4);
    memory.check(bufPtr, list.bytes.length);
    for (let i = 0; i < list.offsets.length; i++) {
      memory.view.setUint32(pointersPtr + i * 4, (bufPtr + list.offsets[i]) >>> 0, true);
    }
    memory.u8.set(list.bytes, bufPtr);
    return Errno.SUCCESS;
  }

  /** Every sock_* answer: EBADF for a closed descriptor, ENOTSOCK for any open one. */
  function notASocket(fd: number): number {
    table.get(fd);
    return Errno.NOTSOCK;
  }

  return {
    args_sizes_get: (countPtr: number, sizePtr: number): number => (lists(), sizes(args, countPtr, sizePtr)),
    args_get: (argvPtr: number, bufPtr: number): number => (lists(), get(args, argvPtr, bufPtr)),
    environ_sizes_get: (countPtr: number, sizePtr: number): number => (lists(), sizes(env, countPtr, sizePtr)),
    environ_get: (environPtr: number, bufPtr: number): number => (lists(), get(env, environPtr, bufPtr)),

    proc_exit(code: number): never {
      throw new ProcExit(code >>> 0);
    },

    /** Signals are not delivered: a guest that wants to end itself calls proc_exit or traps. */
    proc_raise(): number {
      return Errno.NOSYS;
    },

    sched_yield: (): number => Errno.SUCCESS,

    sock_accept: (fd: number): number => notASocket(fd),
    sock_recv: (fd: number): number => notASocket(fd),
    sock_send: (fd: number): number => notASocket(fd),
    sock_shutdown: (fd: number): number => notASocket(fd),
  };
}
