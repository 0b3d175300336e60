/**
 * `GET /v1/calls/stream`: the call log's live feed (platform/call-events.ts) as Server-Sent Events. Each call
 * is sent when it is recorded as `running` and again when it ends, as `event: call` with the same JSON view
 * as the calls search; each event's `id:` is `<epoch>.<seq>`, so a client that reconnects with
 * `Last-Event-ID` gets what it missed. When that cannot be done (the id is from another process — the
 * server restarted — or older than the events kept) the stream starts with `event: reset`: reload the list.
 *
 * A comment line goes out every `heartbeatMs` so proxies and clients see the connection is alive. A client
 * that does not read (its socket's buffer past `maxBufferedBytes`) is cut off rather than buffered for:
 * it reconnects and resumes. Closing the server ends every stream first, so shutdown is not held by them.
 */
import type { ServerResponse } from 'node:http';
import type { CallEvent, CallEvents, CallFilter } from '../platform/index.js';
import { HttpError } from './http-error.js';
import { callView } from './views.js';

export const HEARTBEAT_MS = 15_000;
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** What the client waits before reconnecting (the SSE `retry:` field). */
export const RECONNECT_MS = 2_000;

export interface CallStreamOptions {
  heartbeatMs?: number;
  maxBufferedBytes?: number;
}

/** Whether an event passes the stream's filter (the same fields as the calls search). */
export function matchesFilter(event: CallEvent, filter: CallFilter): boolean {
  return (filter.agentId === undefined || event.agentId === filter.agentId)
    && (filter.sessionId === undefined || event.call.sessionId === filter.sessionId)
    && (filter.tool === undefined || event.call.tool === filter.tool)
    && (filter.outcome === undefined || event.call.outcome === filter.outcome);
}

/** The sequence number a Last-Event-ID names in this process; null when it is absent, malformed or another process's. */
export function resumePoint(lastEventId: string | undefined, epoch: string): number | 'elsewhere' | null {
  if (lastEventId === undefined || lastEventId === '') return null;
  const match = /^([0-9a-f]+)\.(\d{1,15})$/.exec(lastEventId.trim());
  if (!match || match[1] !== epoch) return 'elsewhere';
  return Number(match[2]);
}

/** Each event's text, made once however many streams send it. */
const texts = new WeakMap<CallEvent, string>();

export function eventText(event: CallEvent, epoch: string): string {
  let text = texts.get(event);
  if (text === undefined) {
    text = `id: ${epoch}.${event.seq}\nevent: call\ndata: ${JSON.stringify(callView(event.call, event.agentId))}\n\n`;
    texts.set(event, text);
  }
  return text;
}

export class CallStreams {
  private readonly open = new Set<(cut?: boolean) => void>();
  private readonly heartbeatMs: number;
  private readonly maxBufferedBytes: number;

  constructor(private readonly events: CallEvents, options: CallStreamOptions = {}) {
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    this.maxBufferedBytes = options.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
  }

  /** Serves one stream until the client goes away or the server closes; resolves then. */
  serve(res: ServerResponse, filter: CallFilter, lastEventId: string | undefined, signal: AbortSignal): Promise<void> {
    const { events } = this;
    return new Promise<void>((resolve) => {
      let ended = false;
      let heartbeat: NodeJS.Timeout | null = null;
      let unsubscribe: (() => void) | null = null;
      /** `cut`: the client stopped reading; its connection is dropped, not left to drain what it will never read. */
      const end = (cut = false) => {
        if (ended) return;
        ended = true;
        if (heartbeat) clearInterval(heartbeat);
        unsubscribe?.();
        this.open.delete(end);
        signal.removeEventListener('abort', onAbort);
        if (cut) res.destroy();
        else if (!res.writableEnded) res.end();
        resolve();
      };
      const onAbort = () => end();
      const send = (text: string) => {
        if (ended) return;
        res.write(text);
        if (res.writableLength > this.maxBufferedBytes) end(true);
      };
      // Everything from here to the first write runs without yielding, so no event can fall between the
      // replay of missed events and the live ones.
      unsubscribe = events.subscribe((event) => {
        if (matchesFilter(event, filter)) send(eventText(event, events.epoch));
      });
      if (!unsubscribe) {
        throw new HttpError(503, 'too_many_streams', `${events.maxSubscribers} call streams are open, as many as this server holds; try again later`,
          undefined, { 'retry-after': String(Math.ceil(RECONNECT_MS / 1000)) });
      }
      this.open.add(end);
      signal.addEventListener('abort', onAbort, { once: true });
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        'x-accel-buffering': 'no',
        'x-content-type-options': 'nosniff',
      });
      let text = `retry: ${RECONNECT_MS}\n: subako call stream\n\n`;
      const from = resumePoint(lastEventId, events.epoch);
      if (from !== null) {
        const missed = from === 'elsewhere' ? null : events.since(from);
        if (missed === null) {
          text += `id: ${events.epoch}.${events.last}\nevent: reset\ndata: ${JSON.stringify({ reason: 'the events after Last-Event-ID are no longer kept; reload the calls list' })}\n\n`;
        } else {
          for (const event of missed) if (matchesFilter(event, filter)) text += eventText(event, events.epoch);
        }
      }
      send(text);
      heartbeat = setInterval(() => send(': heartbeat\n\n'), this.heartbeatMs);
      res.on('close', onAbort);
    });
  }

  /** Ends every open stream (the server is closing). */
  closeAll(): void {
    for (const end of [...this.open]) end();
  }
}
