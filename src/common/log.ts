/**
 * The platform's logger: structured JSON lines (pino) on stderr — stdout may carry a protocol (`subako mcp`
 * over stdio). Behind a narrow interface so nothing above depends on pino's own API.
 *
 * The level comes from SUBAKO_LOG_LEVEL; without it, `info`, or `silent` when running under Node's test
 * runner (it sets NODE_TEST_CONTEXT in the processes it starts), so tests stay quiet unless asked otherwise.
 */
import { pino, type DestinationStream } from 'pino';

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
  /** Where lines go (default: stderr, written synchronously so a crash loses none). */
  destination?: DestinationStream;
}

const LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function defaultLogLevel(env: NodeJS.ProcessEnv = process.env): LogLevel {
  const asked = env.SUBAKO_LOG_LEVEL?.toLowerCase();
  if (asked !== undefined && (LEVELS as readonly string[]).includes(asked)) return asked as LogLevel;
  return env.NODE_TEST_CONTEXT !== undefined ? 'silent' : 'info';
}

/** Errors go under `err` (pino's serializer keeps type, message, stack and code). */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    { level: options.level ?? defaultLogLevel(), base: { name: 'subako' }, serializers: { err: pino.stdSerializers.err } },
    options.destination ?? pino.destination({ dest: 2, sync: true }),
  );
}

/** A logger that writes nothing. */
export const silentLogger: Logger = createLogger({ level: 'silent' });
