/**
 * `subako wasi <module.wasm> [args…] [--dir HOST::GUEST]… [--env K=V]… [--timeout ms] [--memory MiB]`:
 * runs a plain WASI preview 1 command in the sandbox. Stdin, stdout and stderr pass through; the exit
 * status is the module's, or for a trap or a limit a fixed code with the reason on stderr.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import { isSystemError } from '../common/index.js';
import { DEFAULT_CALL_LIMITS } from '../config.js';
import { SubakoError, UsageError } from '../errors.js';
import { WASI_COMMAND_RULES } from '../package/index.js';
import { SandboxPool, type RunOutcome } from '../sandbox/index.js';
import type { PreopenSpec } from '../wasi/index.js';
import { checkModule } from '../wasm/index.js';
import type { CommandContext } from './command-context.js';

/** Exit statuses for what is not the module's own exit, after the shell's conventions. */
export const WASI_EXIT = Object.freeze({
  refused: 1,
  trap: 134,
  timeout: 124,
  outOfMemory: 137,
  stdoutLimit: 141,
  interrupted: 130,
  /** Whoever read stdout closed it (`| head`): the guest is stopped, as SIGPIPE would stop a program. */
  stdoutClosed: 141,
});

export interface WasiCommandLine {
  modulePath: string;
  /** The guest's arguments after argv[0]. */
  args: string[];
  dirs: Array<{ hostPath: string; guestPath: string }>;
  env: string[];
  timeoutMs?: number;
  memoryMiB?: number;
  help: boolean;
}

const USAGE = '<module.wasm> [args...] [--dir HOST::GUEST]... [--env K=V]... [--timeout ms] [--memory MiB]';

const HELP = `Usage: subako wasi ${USAGE}

Runs a plain WASI preview 1 command. Stdin, stdout and stderr pass through; the exit status is the
module's own, or ${WASI_EXIT.trap} for a trap, ${WASI_EXIT.timeout} past --timeout, ${WASI_EXIT.outOfMemory} out of memory.

Options (anywhere on the line; words after "--" all go to the module):
  --dir HOST::GUEST  preopen the host directory HOST as GUEST (HOST alone: the same name); in order
  --env K=V          an environment variable for the module (repeatable)
  --timeout ms       stop the module after this many milliseconds (default: no deadline)
  --memory MiB       the module's memory cap (default: ${DEFAULT_CALL_LIMITS.memoryBytes / 1024 / 1024})
  -h, --help         this help
`;

function positiveNumber(flag: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) {
    throw new UsageError(`${flag} takes a positive number, not "${value}"`);
  }
  return n;
}

/**
 * Parses the words after `wasi`. Subako's options are recognised anywhere until `--`; every other
 * word (a dash included) is, after the module, one of the module's arguments, in order.
 */
export function parseWasiCommandLine(words: readonly string[]): WasiCommandLine {
  const line: WasiCommandLine = { modulePath: '', args: [], dirs: [], env: [], help: false };
  let optionsEnded = false;
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    const positional = (): void => {
      if (line.modulePath === '') line.modulePath = word;
      else line.args.push(word);
    };
    if (optionsEnded) {
      positional();
      continue;
    }
    if (word === '--') {
      optionsEnded = true;
      continue;
    }
    if (word === '-h' || word === '--help') {
      line.help = true;
      continue;
    }
    const match = /^--(dir|env|timeout|memory)(?:=(.*))?$/s.exec(word);
    if (!match) {
      positional();
      continue;
    }
    const flag = `--${match[1]}`;
    let value = match[2];
    if (value === undefined) {
      if (i + 1 >= words.length) throw new UsageError(`${flag} needs a value`);
      value = words[++i];
    }
    if (flag === '--dir') line.dirs.push(parseDir(value));
    else if (flag === '--env') {
      if (!value.includes('=') || value.startsWith('=')) throw new UsageError(`--env takes K=V, not "${value}"`);
      line.env.push(value);
    } else if (flag === '--timeout') line.timeoutMs = positiveNumber(flag, value);
    else line.memoryMiB = positiveNumber(flag, value);
  }
  if (line.modulePath === '' && !line.help) throw new UsageError(`missing the module: subako wasi ${USAGE}`);
  return line;
}

function parseDir(value: string): { hostPath: string; guestPath: string } {
  const at = value.indexOf('::');
  const hostPath = at < 0 ? value : value.slice(0, at);
  const guestPath = at < 0 ? value : value.slice(at + 2);
  if (hostPath === '' || guestPath === '') throw new UsageError(`--dir takes HOST::GUEST, not "${value}"`);
  return { hostPath, guestPath };
}

export interface WasiIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
}

/** What the person is told when the module did not exit by itself, and the status to end with. */
export function describeOutcome(outcome: RunOutcome, timeoutMs?: number): { status: number; reason?: string } {
  switch (outcome.kind) {
    case 'exit':
      return { status: outcome.code };
    case 'trap':
      return { status: WASI_EXIT.trap, reason: `the module trapped: ${outcome.message}` };
    case 'out_of_memory':
      return { status: WASI_EXIT.outOfMemory, reason: `the module ran out of memory: ${outcome.message}` };
    case 'timeout':
      return { status: WASI_EXIT.timeout, reason: `the module ran past its deadline of ${timeoutMs} ms` };
    case 'stdout_limit':
      return { status: WASI_EXIT.stdoutLimit, reason: 'the module wrote more to stdout than allowed' };
    case 'killed':
      return { status: WASI_EXIT.interrupted, reason: `the module was stopped: ${outcome.reason}` };
    case 'sandbox_crashed':
      return { status: WASI_EXIT.trap, reason: outcome.message };
  }
}

function preopensOf(line: WasiCommandLine): PreopenSpec[] {
  return line.dirs.map(({ hostPath, guestPath }) => {
    const absolute = resolve(hostPath);
    let isDirectory = false;
    try {
      isDirectory = statSync(absolute).isDirectory();
    } catch (error) {
      if (!isSystemError(error)) throw error; // expected: missing or unreadable
      // reported below
    }
    if (!isDirectory) throw new UsageError(`--dir ${hostPath}: not a directory`);
    return { guestPath, hostPath: absolute, readOnly: false };
  });
}

/** Runs the command line; resolves with the exit status. Usage errors throw UsageError. */
export async function runWasi(words: readonly string[], io: WasiIo): Promise<number> {
  const line = parseWasiCommandLine(words);
  if (line.help) {
    io.stdout.write(HELP);
    return 0;
  }
  const preopens = preopensOf(line);
  const say = (message: string): void => void io.stderr.write(`subako: ${message}\n`);
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(line.modulePath);
  } catch (error) {
    say(`cannot read ${line.modulePath}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    return WASI_EXIT.refused;
  }
  const check = checkModule(bytes, WASI_COMMAND_RULES);
  if (!check.ok) {
    say(`${line.modulePath} was refused:`);
    for (const problem of check.problems) io.stderr.write(`  ${problem.code}: ${problem.message}\n`);
    return WASI_EXIT.refused;
  }
  const memoryBytes = line.memoryMiB === undefined ? DEFAULT_CALL_LIMITS.memoryBytes : Math.floor(line.memoryMiB * 1024 * 1024);
  const pool = new SandboxPool({ size: 1 });
  try {
    return await runOnPool(pool, bytes, line, preopens, memoryBytes, io, say);
  } finally {
    await pool.close();
  }
}

async function runOnPool(
  pool: SandboxPool,
  bytes: Uint8Array,
  line: WasiCommandLine,
  preopens: PreopenSpec[],
  memoryBytes: number,
  io: WasiIo,
  say: (message: string) => void,
): Promise<number> {
  let compiled;
  try {
    compiled = await pool.compile(bytes, { memoryBytes });
  } catch (error) {
    if (!(error instanceof SubakoError)) throw error;
    say(error.message);
    return error.code === 'out_of_memory' ? WASI_EXIT.outOfMemory : WASI_EXIT.refused;
  }
  let stdoutClosed = false;
  const handle = pool.run(compiled, {
    args: [basename(line.modulePath), ...line.args],
    env: line.env,
    preopens,
    limits: {
      timeoutMs: line.timeoutMs ?? Infinity,
      memoryBytes,
      stdoutBytes: Infinity,
      stderrTailBytes: 0,
      writeBudgetBytes: DEFAULT_CALL_LIMITS.writeBudgetBytes,
    },
    onStdout: (chunk) => void (stdoutClosed || io.stdout.write(chunk)),
    onStderr: (chunk) => void io.stderr.write(chunk),
  });
  const onData = (chunk: Buffer): void => handle.writeStdin(chunk);
  const onEnd = (): void => handle.closeStdin();
  const onInterrupt = (): void => handle.kill('interrupted');
  // A reader that stops reading (`| head`) is the end of the run, not an error of ours: stop the guest.
  const onStdoutError = (error: NodeJS.ErrnoException): void => {
    if (error.code !== 'EPIPE') say(`cannot write stdout: ${error.code ?? error.message}`);
    stdoutClosed = true;
    handle.kill('stdout closed');
  };
  io.stdin.on('data', onData).once('end', onEnd).once('error', onEnd);
  io.stdout.on('error', onStdoutError);
  process.once('SIGINT', onInterrupt);
  try {
    const { outcome } = await handle.result;
    if (stdoutClosed) return WASI_EXIT.stdoutClosed;
    const { status, reason } = describeOutcome(outcome, line.timeoutMs);
    if (reason) say(reason);
    return status;
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    io.stdout.removeListener('error', onStdoutError);
    io.stdin.removeListener('data', onData).removeListener('end', onEnd).removeListener('error', onEnd);
    // Stop reading: a terminal or a pipe nobody closes must not keep the process alive.
    io.stdin.pause();
  }
}

/** The words after `wasi` exactly as typed (commander drops a `--` in some positions). */
function wordsAfterSubcommand(command: Command, fallback: string[]): string[] {
  // rawArgs is set by parse() on every command but missing from commander's typings.
  const raw = (command.parent as { rawArgs?: string[] } | null)?.rawArgs ?? [];
  const at = raw.indexOf('wasi', 2);
  return at < 0 ? fallback : raw.slice(at + 1);
}

export function registerWasi(program: Command, ctx: CommandContext): void {
  program
    .command('wasi')
    .summary('run a plain WASI preview 1 command module')
    .description('Run a plain WASI preview 1 command; stdin, stdout and stderr pass through.')
    .usage(USAGE)
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[words...]')
    .addHelpText('after', `\n${HELP.split('\n\n').slice(1).join('\n\n')}`)
    .action(async (words: string[], _options: unknown, command: Command) => {
      ctx.exitCode = await runWasi(wordsAfterSubcommand(command, words), {
        stdin: process.stdin,
        stdout: process.stdout,
        stderr: process.stderr,
      });
    });
}
