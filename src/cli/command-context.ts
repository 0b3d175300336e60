/**
 * What every subcommand shares with the `subako` command: the exit codes and the context an action sets
 * instead of calling process.exit. A file of its own so that the subcommands need not import main.ts, which
 * imports them (no circle).
 */
import { SubakoError } from '../errors.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** A subcommand's action sets this instead of calling process.exit, so tests can run main() in-process. */
export interface CommandContext {
  exitCode: number;
}

/** A command that failed in a way its one-line message explains (a refused request, a server not reached): exit 1. */
export class CommandFailure extends SubakoError {}
