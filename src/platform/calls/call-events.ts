/**
 * The call log's live feed: the one writer (`CallLog.run`) publishes each call here when it is recorded as
 * `running` and again when it ends, and subscribers (the `/v1/calls/stream` route) hear it at once — nobody
 * polls SQLite. Every event gets a sequence number, and the last events are kept so a subscriber that lost
 * its connection can be given what it missed (`since`); one that was away longer, or whose sequence number
 * comes from another process (the `epoch` differs), is told so and reloads the list instead.
 *
 * Subscribers are bounded: a feed that anyone holding a key can open must not grow without limit.
 *
 * With several replicas and NATS, each replica's relay (nats-events.ts) feeds the calls other replicas record
 * into this feed too, tagged with their `origin`, so a stream on any replica hears every replica's calls.
 * Observers (the server's metrics, the relay itself) hear only this process's own: a call is counted once,
 * by the replica that ran it, and a relayed event is never relayed back out.
 */
import { randomBytes } from 'node:crypto';
import type { CallRecord } from '../store/index.js';

export interface CallEvent {
  /** Rises by one per event within this process. */
  seq: number;
  /** The record's size as JSON, counted against what is kept. */
  bytes: number;
  /** The call as recorded now (redacted, like every stored record): `running` when it starts, then its end. */
  call: CallRecord;
  /** The agent of the call's session (calls are filtered by it; the record names only the session). */
  agentId: string;
  /** The replica that recorded it (its feed's `epoch`), when that is not this process: a relayed event. */
  origin?: string;
}

export type CallEventListener = (event: CallEvent) => void;

export const DEFAULT_KEPT_EVENTS = 1_000;
/** A call's record can be large (a result's text up to the stdout limit): what is kept is bounded in bytes too. */
export const DEFAULT_KEPT_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MAX_SUBSCRIBERS = 64;

export class CallEvents {
  /** Tells this process's sequence numbers from another's (a restarted server starts again at 1). */
  readonly epoch = randomBytes(6).toString('hex');
  private seq = 0;
  private readonly kept: CallEvent[] = [];
  private keptBytes = 0;
  private readonly listeners = new Set<CallEventListener>();
  private readonly observers = new Set<CallEventListener>();

  constructor(readonly keep = DEFAULT_KEPT_EVENTS, readonly maxSubscribers = DEFAULT_MAX_SUBSCRIBERS, readonly keepBytes = DEFAULT_KEPT_BYTES) {}

  get subscribers(): number {
    return this.listeners.size;
  }

  /** The sequence number of the last event published (0 before any). */
  get last(): number {
    return this.seq;
  }

  /** `origin`: the replica that recorded the call, for one relayed from another (absent for this process's own). */
  publish(call: CallRecord, agentId: string, origin?: string): void {
    this.seq += 1;
    const event: CallEvent = { seq: this.seq, bytes: JSON.stringify(call).length, call, agentId, ...(origin !== undefined ? { origin } : {}) };
    this.kept.push(event);
    this.keptBytes += event.bytes;
    while (this.kept.length > this.keep || (this.keptBytes > this.keepBytes && this.kept.length > 1)) {
      this.keptBytes -= (this.kept.shift() as CallEvent).bytes;
    }
    for (const listener of [...(origin === undefined ? this.observers : []), ...this.listeners]) listener(event);
  }

  /** Adds a listener; returns its unsubscribe, or null when as many subscribers as allowed already listen. */
  subscribe(listener: CallEventListener): (() => void) | null {
    if (this.listeners.size >= this.maxSubscribers) return null;
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Adds an in-process observer (the server's metrics, the relay to other replicas): unlike a subscriber it is
   * the server's own, one per server, so it does not take one of the bounded subscribers' places; and it hears
   * only the calls of this process, not those relayed from other replicas. Returns its removal.
   */
  observe(listener: CallEventListener): () => void {
    this.observers.add(listener);
    return () => this.observers.delete(listener);
  }

  /**
   * The events after `seq`, oldest first; null when some of them are no longer kept (or `seq` is from the
   * future, which only another process's number can be).
   */
  since(seq: number): CallEvent[] | null {
    if (seq > this.seq || seq < 0) return null;
    if (seq === this.seq) return [];
    const oldest = this.kept[0]?.seq ?? this.seq + 1;
    if (seq + 1 < oldest) return null;
    return this.kept.filter((event) => event.seq > seq);
  }
}
