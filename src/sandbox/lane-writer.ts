/**
 * The worker's end of its lane, for writing. Frames go out with a synchronous write on the socket's
 * descriptor, from inside the guest's own call: the thread is blocked in the guest and its event loop does
 * not turn until the run ends, so a stream write would only queue. When the socket's buffer is full the
 * guest waits (a millisecond at a time, in Atomics.wait, which a terminate ends), so a flood of output never
 * piles up in memory: the kernel's buffer is the window, and the server reading is what opens it.
 */
import { writeSync } from 'node:fs';
import { encodeFrame } from './lane-frames.js';
import type { FromLane } from './process-protocol.js';

export class LaneWriter {
  constructor(
    private readonly fd: number,
    private readonly sleep: (ms: number) => void,
  ) {}

  write(message: FromLane): void {
    const frame = encodeFrame(message);
    let at = 0;
    while (at < frame.length) {
      try {
        at += writeSync(this.fd, frame, at, frame.length - at);
      } catch (error) {
        // Any other failure (the server closed the lane) ends this worker: nobody is left to serve.
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        this.sleep(1);
      }
    }
  }
}
