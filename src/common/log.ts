/**
 * The platform's logger: structured JSON lines (pino) on stderr — stdout may carry a protocol (`subako mcp`
 * over stdio). Behind a narrow interface so nothing above depends on pino's own API.
 *
 * The level comes from SUBAKO_LOG_LEVEL; without it, `info`, or `silent` when running under Node's test
 * runner (it sets NODE_TEST_CONTEXT in the processes it starts), so tests stay quiet unless asked otherwise.
 *
 * Lines are buffered, not written one system call each: the access log writes a line per request, and on a
 * busy server a write per line was a tenth of the process's CPU. The buffer goes out when it holds 8 KiB,
 * every 250 ms, at exit, and at once after a line at `error` or above (errors are read now, and the lines
 * before them come first, in order). A process killed with SIGKILL loses at most the last 250 ms of info lines.
 *
 * While traces are exported (telemetry/), a line written in a span's work carries `trace_id` and `span_id`.
 *
 * pino is loaded when the first logger is made, not when this file is: every room imports common/, and a
 * command that logs nothing (`subako call`, a library user's first call) need not pay for it at start.
 */
import { createRequire } from 'node:module';
import type { DestinationStream, pino as Pino } from 'pino';
import { traceFields } from './trace.js';

let loadedPino: typeof Pino | null = null;

function pinoModule(): typeof Pino {
  loadedPino ??= (createRequire(import.meta.url)('pino') as { pino: typeof Pino }).pino;
  return loadedPino;
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type LogFields = Record<string, unknown>;

export interface Logger {
  error(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  info(fields: LogFields, message: string): void;
  debug(fields: LogFields, message: string): void;
  /** A logger whose every line carries `bindings` too (e.g. `{ component: 'sweeper' }`). */
  child(bindings: LogFields): Logger;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go (default: stderr, buffered; see above). */
  destination?: DestinationStream;
}

const LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function defaultLogLevel(env: NodeJS.ProcessEnv = process.env): LogLevel {
  const asked = env.SUBAKO_LOG_LEVEL?.toLowerCase();
  if (asked !== undefined && (LEVELS as readonly string[]).includes(asked)) return asked as LogLevel;
  return env.NODE_TEST_CONTEXT !== undefined ? 'silent' : 'info';
}

/** Below sonic-boom's largest single write (16 KiB), as it requires. */
const BUFFER_BYTES = 8 * 1024;
const FLUSH_EVERY_MS = 250;

let stderrLines: DestinationStream | null = null;

/** The process's one buffered stderr destination (one buffer, one exit hook, however many loggers). */
function bufferedStderr(): DestinationStream {
  if (stderrLines) return stderrLines;
  const pino = pinoModule();
  const buffered = pino.destination({ dest: 2, sync: true, minLength: BUFFER_BYTES, periodicFlush: FLUSH_EVERY_MS });
  process.once('exit', () => buffered.flushSync());
  const urgent: DestinationStream = {
    write(line: string) {
      buffered.write(line);
      buffered.flushSync();
    },
  };
  stderrLines = pino.multistream([{ level: 'trace', stream: buffered }, { level: 'error', stream: urgent }], { dedupe: true });
  return stderrLines;
}

/** Errors go under `err` (pino's serializer keeps type, message, stack and code). */
export function createLogger(options: LoggerOptions = {}): Logger {
  const pino = pinoModule();
  return pino(
    {
      level: options.level ?? defaultLogLevel(), base: { name: 'subako' }, serializers: { err: pino.stdSerializers.err },
      // A line written while a call's span is recorded carries its trace_id and span_id: the trace it belongs to.
      mixin: traceFields,
    },
    options.destination ?? bufferedStderr(),
  );
}

/** A logger that writes nothing (made without pino: nothing it would do is needed). */
export const silentLogger: Logger = {
  error: () => undefined,
  warn: () => undefined,
  info: () => undefined,
  debug: () => undefined,
  child: () => silentLogger,
};
