/**
 * The serving side of logging: a request whose `_meta` carries `io.modelcontextprotocol/logLevel` (the 2026-07-28
 * revision's per-request level, which replaced `logging/setLevel`) gets a LogReporter whose messages at that level
 * or above become `notifications/message` on the request's own stream. A 2026-07-28 request without it gets none:
 * the revision forbids a message for a request that did not ask. A 2025-era request without it gets LEGACY_LOG_LEVEL
 * and above: its era lets a server choose when the client set no level, and its `logging/setLevel`, accepted,
 * cannot outlive its own request on an endpoint served statelessly.
 *
 * Whatever a tool sends — an upstream server's messages relayed, a hostile one's included — is checked here, once
 * for every source: a level that is not one of MCP's is dropped, data is cut to MAX_LOG_DATA_CHARS of JSON (then
 * sent as that text), a logger name to MAX_LOGGER_CHARS, and a call sends at most MAX_LOG_MESSAGES_PER_CALL
 * messages (a flood would otherwise fill the client's stream). Nothing is sent once the call has ended, and
 * sending never throws into the tool.
 */
import { LOG_LEVELS, type LogLevel, type LogReporter } from '../tool.js';

/** The `_meta` key of a request's log level (MCP 2026-07-28). */
export const LOG_LEVEL_META_KEY = 'io.modelcontextprotocol/logLevel';
/** What a 2025-era request that named no level gets (the SDK's own default for that era is everything). */
export const LEGACY_LOG_LEVEL: LogLevel = 'info';
/** Messages one call may send; later ones are dropped. */
export const MAX_LOG_MESSAGES_PER_CALL = 1000;
/** A message's data past this many characters of JSON is sent as that JSON text, cut. */
export const MAX_LOG_DATA_CHARS = 8192;
export const MAX_LOGGER_CHARS = 256;

export interface LogNotification {
  method: 'notifications/message';
  params: { level: LogLevel; data: unknown; logger?: string };
}

const SEVERITY: ReadonlyMap<string, number> = new Map(LOG_LEVELS.map((level, index) => [level, index]));

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && SEVERITY.has(value);
}

/** The level a request asked for, from its lifted envelope or its `_meta`, or undefined (none asked, or not a level). */
export function logLevelOf(...metas: unknown[]): LogLevel | undefined {
  for (const meta of metas) {
    if (typeof meta !== 'object' || meta === null) continue;
    const level = (meta as Record<string, unknown>)[LOG_LEVEL_META_KEY];
    if (isLogLevel(level)) return level;
  }
  return undefined;
}

/** Whether a message at `level` passes a request's `threshold`. */
export function passesLogLevel(level: LogLevel, threshold: LogLevel): boolean {
  return SEVERITY.get(level)! >= SEVERITY.get(threshold)!;
}

/** `data` as it may go out: itself when its JSON is short enough, else that JSON cut (undefined when it has none). */
function boundedData(data: unknown): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(data);
  } catch {
    text = undefined; // a cycle or a BigInt: not JSON, so sent as a string below
  }
  if (text === undefined) return String(data).slice(0, MAX_LOG_DATA_CHARS);
  return text.length <= MAX_LOG_DATA_CHARS ? data : `${text.slice(0, MAX_LOG_DATA_CHARS)}…`;
}

export interface LogSender {
  readonly report: LogReporter;
  /** The call ended: later messages are dropped. */
  end(): void;
}

export function logSender(threshold: LogLevel, send: (notification: LogNotification) => Promise<void>, onError: (error: Error) => void): LogSender {
  let sent = 0;
  let ended = false;
  const report = ((level: LogLevel, data: unknown, logger?: string) => {
    if (ended || !isLogLevel(level) || !passesLogLevel(level, threshold) || sent >= MAX_LOG_MESSAGES_PER_CALL) return;
    sent += 1;
    const params: LogNotification['params'] = { level, data: boundedData(data) };
    if (typeof logger === 'string') params.logger = logger.slice(0, MAX_LOGGER_CHARS);
    try {
      send({ method: 'notifications/message', params }).catch((err: unknown) => onError(err instanceof Error ? err : new Error(String(err))));
    } catch (err) {
      onError(err instanceof Error ? err : new Error(String(err)));
    }
  }) as LogReporter;
  Object.defineProperty(report, 'level', { value: threshold, enumerable: true });
  return { report, end: () => { ended = true; } };
}
