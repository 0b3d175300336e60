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
 *
 * A stream lives only as long as the key that opened it. Each remembers its key; once every `keyCheckMs` one
 * query asks which of the keys of all open streams are still in force (never a query per stream, and at most
 * as many keys as there are places), and the streams of the others end. A revocation made through this process
 * ends its streams at once. A stream whose key could not be confirmed for `unconfirmedGraceMs` (the store did
 * not answer) ends too: it fails closed, and its client resumes from Last-Event-ID once the store is back.
 * Every end the server decides is told as a last `event: end` (no `id:`, so a resume is not moved past it)
 * whose data names the reason. Places are shared among keys by stream-places.ts.
 */
import type { ServerResponse } from 'node:http';
import type { CallEvent, CallEvents, CallFilter } from '../platform/index.js';
import { placeRefusal, type StreamHolder } from './stream-places.js';
import { callView } from './views.js';

export const HEARTBEAT_MS = 15_000;
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** What the client waits before reconnecting (the SSE `retry:` field). */
export const RECONNECT_MS = 2_000;
/** How often the keys of open streams are checked: a revoked key's streams end within about this. */
export const KEY_CHECK_MS = 1_000;
/** How long a stream goes on while its key cannot be checked (the store does not answer) before it ends. */
export const UNCONFIRMED_GRACE_MS = 5_000;
/** Streams one key may hold open (a console tab and a few `subako calls tail`); as many places are kept for admin keys. */
export const STREAMS_PER_KEY = 8;

/** Which keys are still good, and word of the revocations made here: the platform's `ApiKeys`. */
export interface KeyStanding {
  inForce(ids: readonly string[]): Promise<Set<string>>;
  onRevoked(listener: (id: string) => void): () => void;
}

export interface CallStreamOptions {
  heartbeatMs?: number;
  maxBufferedBytes?: number;
  keyCheckMs?: number;
  unconfirmedGraceMs?: number;
  /** Streams one key may hold; less than the live feed's subscribers. */
  perKey?: number;
}

/** Why the server ended a stream: the data of its last event. */
export type StreamEnding = 'key_revoked' | 'key_unconfirmed' | 'shutting_down';

function endingMessage(ending: StreamEnding, holder: StreamHolder, graceMs: number): string {
  switch (ending) {
    case 'key_revoked':
      return `the API key ${holder.prefix}… was revoked: its streams end with it`;
    case 'key_unconfirmed':
      return `the API key ${holder.prefix}… could not be checked for ${graceMs / 1000} s (the store did not answer); reconnect with Last-Event-ID`;
    case 'shutting_down':
      return 'the server is shutting down; reconnect with Last-Event-ID';
  }
}

interface OpenStream {
  holder: StreamHolder;
  /** When the key was last known to be in force (performance.now()): the stream's opening, or a check begun after it. */
  confirmedAt: number;
  /**
   * Ends the stream once. The server's reasons are told to the client in a last event; `gone` (the client went
   * away) and `cut` (it stopped reading, and its connection is dropped rather than drained) tell nothing.
   */
  end(ending: StreamEnding | 'cut' | 'gone'): void;
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
  private readonly open = new Set<OpenStream>();
  private readonly heartbeatMs: number;
  private readonly maxBufferedBytes: number;
  private readonly keyCheckMs: number;
  private readonly unconfirmedGraceMs: number;
  private readonly perKey: number;
  private checker: NodeJS.Timeout | null = null;
  private checking = false;
  private readonly stopHearingRevocations: () => void;

  constructor(private readonly events: CallEvents, private readonly keys: KeyStanding, options: CallStreamOptions = {}) {
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    this.maxBufferedBytes = options.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
    this.keyCheckMs = options.keyCheckMs ?? KEY_CHECK_MS;
    this.unconfirmedGraceMs = options.unconfirmedGraceMs ?? UNCONFIRMED_GRACE_MS;
    this.perKey = options.perKey ?? STREAMS_PER_KEY;
    if (!(this.perKey >= 1 && this.perKey < events.maxSubscribers)) {
      throw new RangeError(`streams per key (${this.perKey}) must be at least 1 and fewer than the places (${events.maxSubscribers})`);
    }
    this.stopHearingRevocations = keys.onRevoked((id) => this.endKey(id, 'key_revoked'));
  }

  /** Serves one stream for the key `holder` until the client goes away, the key is revoked or the server closes; resolves then. */
  serve(res: ServerResponse, holder: StreamHolder, filter: CallFilter, lastEventId: string | undefined, signal: AbortSignal): Promise<void> {
    const { events } = this;
    // Counted and taken without yielding: two requests at once cannot both take the last place.
    const refusal = placeRefusal(this.held(holder.id), holder, { max: events.maxSubscribers, perKey: this.perKey });
    if (refusal) throw refusal;
    return new Promise<void>((resolve) => {
      let ended = false;
      let heartbeat: NodeJS.Timeout | null = null;
      let unsubscribe: (() => void) | null = null;
      const stream: OpenStream = {
        holder: { id: holder.id, prefix: holder.prefix, scope: holder.scope },
        confirmedAt: performance.now(),
        end: (ending) => {
          if (ended) return;
          ended = true;
          if (heartbeat) clearInterval(heartbeat);
          unsubscribe?.();
          this.forget(stream);
          signal.removeEventListener('abort', onAbort);
          if (ending === 'cut') {
            res.destroy();
          } else if (!res.writableEnded) {
            if (ending !== 'gone') res.write(`event: end\ndata: ${JSON.stringify({ reason: ending, message: endingMessage(ending, stream.holder, this.unconfirmedGraceMs) })}\n\n`);
            res.end();
          }
          resolve();
        },
      };
      const onAbort = () => stream.end('gone');
      const send = (text: string) => {
        if (ended) return;
        res.write(text);
        if (res.writableLength > this.maxBufferedBytes) stream.end('cut');
      };
      // Everything from here to the first write runs without yielding, so no event can fall between the
      // replay of missed events and the live ones.
      unsubscribe = events.subscribe((event) => {
        if (matchesFilter(event, filter)) send(eventText(event, events.epoch));
      });
      // placeRefusal counted the same places the feed bounds: it cannot be full here.
      if (!unsubscribe) throw new Error('the call feed refused a subscriber the stream places allowed');
      this.track(stream);
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

  /** Ends every open stream (the server is closing); answers how many. */
  closeAll(): number {
    this.stopHearingRevocations();
    const open = [...this.open];
    for (const stream of open) stream.end('shutting_down');
    return open.length;
  }

  /** The places held now, in all, by read keys, and by the key `keyId`. */
  private held(keyId: string): { all: number; byReaders: number; byKey: number } {
    let byReaders = 0;
    let byKey = 0;
    for (const { holder } of this.open) {
      if (holder.scope !== 'admin') byReaders += 1;
      if (holder.id === keyId) byKey += 1;
    }
    return { all: this.open.size, byReaders, byKey };
  }

  private track(stream: OpenStream): void {
    this.open.add(stream);
    if (this.checker === null) {
      this.checker = setInterval(() => void this.checkKeys(), this.keyCheckMs);
      // The streams' own connections keep the process alive, not this.
      this.checker.unref();
    }
  }

  private forget(stream: OpenStream): void {
    this.open.delete(stream);
    if (this.open.size === 0 && this.checker !== null) {
      clearInterval(this.checker);
      this.checker = null;
    }
  }

  private endKey(keyId: string, ending: StreamEnding): void {
    for (const stream of [...this.open]) if (stream.holder.id === keyId) stream.end(ending);
  }

  /**
   * One tick: the streams whose key has gone unconfirmed too long end; then, unless the last check is still
   * waiting for the store, one query for the distinct keys of all open streams, and those not in force end.
   */
  private async checkKeys(): Promise<void> {
    const now = performance.now();
    for (const stream of [...this.open]) if (now - stream.confirmedAt > this.unconfirmedGraceMs) stream.end('key_unconfirmed');
    if (this.checking || this.open.size === 0) return;
    this.checking = true;
    try {
      const ids = [...new Set([...this.open].map((stream) => stream.holder.id))];
      const good = await this.keys.inForce(ids);
      const asked = new Set(ids);
      for (const stream of [...this.open]) {
        if (!asked.has(stream.holder.id)) continue; // opened while the store was asked: its own authentication stands
        if (good.has(stream.holder.id)) stream.confirmedAt = Math.max(stream.confirmedAt, now);
        else stream.end('key_revoked');
      }
    } catch {
      // The store did not answer: the next tick asks again, and the grace above ends streams left unconfirmed.
    } finally {
      this.checking = false;
    }
  }
}
