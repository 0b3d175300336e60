/**
 * The graceful end of a long-running command (`subako serve`, `subako worker`): waits for SIGINT or SIGTERM,
 * says what it is doing, runs `stop` (no new work, what runs finishes), and sets exit status 1 when stopping
 * failed. A second signal while stopping is left to Node's default (it ends the process), so an operator who
 * presses Ctrl-C twice is not kept waiting.
 *
 * With a `ceiling`, stopping is bounded: a `stop` still running that long after the signal (something it waits
 * for never ends) is given up on — the log says what it was still waiting for — and the process exits 1.
 */
import type { CommandContext } from './command-context.js';

export interface StopCeiling {
  /** The most stopping may take, in ms, from the signal (a little more than `stop`'s own bound). */
  ms: number;
  /** What stopping still waits for, in words, for the line that says it was given up on. */
  pending: () => string;
}

export function untilStopped(ctx: CommandContext, log: (line: string) => void, stop: () => Promise<void>, ceiling?: StopCeiling): Promise<void> {
  return new Promise<void>((done) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      log(`${signal}: finishing calls in flight, then stopping${ceiling ? ` (at most ${ceiling.ms} ms)` : ''}`);
      let watchdog: NodeJS.Timeout | undefined;
      if (ceiling) {
        watchdog = setTimeout(() => {
          log(`stopping took longer than its ceiling of ${ceiling.ms} ms; still waiting for ${ceiling.pending()}; exiting now`);
          process.exit(1);
        }, ceiling.ms);
        // Only a stop that hangs meets it: a stop that ends leaves nothing behind.
        watchdog.unref();
      }
      stop().then(() => {
        clearTimeout(watchdog);
        done();
      }, (err: unknown) => {
        clearTimeout(watchdog);
        log(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
        ctx.exitCode = 1;
        done();
      });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
