/**
 * The graceful end of a long-running command (`subako serve`, `subako worker`): waits for SIGINT or SIGTERM,
 * says what it is doing, runs `stop` (no new work, what runs finishes), and sets exit status 1 when stopping
 * failed. A second signal while stopping is left to Node's default (it ends the process), so an operator who
 * presses Ctrl-C twice is not kept waiting.
 */
import type { CommandContext } from './command-context.js';

export function untilStopped(ctx: CommandContext, log: (line: string) => void, stop: () => Promise<void>): Promise<void> {
  return new Promise<void>((done) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      log(`${signal}: finishing calls in flight, then stopping`);
      stop().then(done, (err: unknown) => {
        log(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
        ctx.exitCode = 1;
        done();
      });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
