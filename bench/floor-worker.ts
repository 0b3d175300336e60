/**
 * The floor: the cost any V8 host pays to run a guest once. A warm worker instantiates the same compiled
 * module and runs `_start` with a no-op WASI host that answers stdin from a buffer and discards stdout
 * (peers/runners.ts, `floor`). No limits, no sandboxed files, no streaming: nothing of ours. The main thread
 * times the round trip.
 */
import { parentPort } from 'node:worker_threads';
import { makeRunner, type Runner } from './peers/runners.js';

let run: Runner | null = null;

parentPort!.on('message', (message: { module?: WebAssembly.Module; stdin?: Uint8Array }) => {
  void (async () => {
    if (message.module && message.stdin) {
      run = await makeRunner({ kind: 'floor', module: message.module, requestLine: Buffer.from(message.stdin).toString('utf8') });
    }
    parentPort!.postMessage(await run!());
  })();
});
