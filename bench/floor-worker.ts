/**
 * The floor: the cost any V8 host pays to run a guest once. A warm worker instantiates the same compiled
 * module and runs `_start` with a no-op WASI host that answers stdin from a buffer and discards stdout.
 * No limits, no sandboxed files, no streaming: nothing of ours. The main thread times the round trip.
 */
import { parentPort } from 'node:worker_threads';

class Exit extends Error {
  constructor(readonly code: number) {
    super('exit');
  }
}

const ENOSYS = 52;
let module: WebAssembly.Module;
let stdin: Uint8Array = new Uint8Array(0);

function runOnce(): number {
  let offset = 0;
  let memory!: WebAssembly.Memory;
  let written = 0;
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
    fd_seek: () => ENOSYS,
    proc_exit(code) {
      throw new Exit(code);
    },
  };
  const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasi });
  memory = instance.exports.memory as WebAssembly.Memory;
  try {
    (instance.exports._start as () => void)();
  } catch (err) {
    if (!(err instanceof Exit)) throw err;
  }
  return written;
}

parentPort!.on('message', (message: { module?: WebAssembly.Module; stdin?: Uint8Array }) => {
  if (message.module) module = message.module;
  if (message.stdin) stdin = message.stdin;
  parentPort!.postMessage(runOnce());
});
