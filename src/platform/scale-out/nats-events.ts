/**
 * The live call stream across replicas (`subako serve --nats`): each replica publishes the call records it
 * writes (already redacted, as stored) to `<prefix>.events`, and feeds those of every other replica into its own
 * feed (call-events.ts), tagged with their origin, so `GET /v1/calls/stream` on any replica hears every
 * replica's calls. An event is relayed once: a replica hears only its own calls to publish (observers do not
 * hear relayed events), and drops its own when NATS echoes them back.
 *
 * Sealed like every message on the bus (nats-envelope.ts): a record is read by the replicas alone, and one
 * that does not open — forged by someone without the key — never reaches a stream; each is taken once, by its
 * message id, so a record captured and sent again is not shown twice.
 *
 * Best effort, like the feed itself: a replica away from NATS for a while misses what was published meanwhile;
 * the calls list (the store) stays complete, and a console reloads it on `event: reset`. A record larger than
 * the server's message size travels without its result and stderr (marked so); the stored record has them.
 */
import { randomBytes } from 'node:crypto';
import type { Subscription } from '@nats-io/transport-node';
import type { CallEvents } from '../calls/index.js';
import { MESSAGE_TTL_MS, natsSubjects, type SealedBus } from './nats-calls.js';
import { ReplayGuard } from './nats-envelope.js';
import type { CallRecord } from '../store/index.js';

/** One call record on `<prefix>.events`. */
export interface RelayedCall {
  v: 1;
  /** The publishing replica: its feed's epoch. */
  origin: string;
  agentId: string;
  call: CallRecord;
}

/** What a relayed record says in place of a result too large to travel. */
export const NOT_RELAYED_TEXT = '(too large to relay to other replicas: the call\'s record has it)';

/** NATS's default message limit, when the server does not say its own. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/** What a sealed envelope adds to its body: the header, the IV, the tag (and a margin for the header's length). */
const ENVELOPE_OVERHEAD = 256;

/**
 * The body for one record, within `maxBytes` once sealed: whole when it fits, else without its result and
 * stderr, else without its arguments too; null when even that does not fit (nothing is sent).
 */
export function relayBody(event: Omit<RelayedCall, 'v'>, maxBytes: number): RelayedCall | null {
  const fits = (call: CallRecord): RelayedCall | null => {
    const body: RelayedCall = { v: 1, origin: event.origin, agentId: event.agentId, call };
    return Buffer.byteLength(JSON.stringify(body)) + ENVELOPE_OVERHEAD <= maxBytes ? body : null;
  };
  const slim: CallRecord = { ...event.call, model: [{ type: 'text', text: NOT_RELAYED_TEXT }], stderrTail: '' };
  return fits(event.call) ?? fits(slim) ?? fits({ ...slim, arguments: NOT_RELAYED_TEXT });
}

/** A relayed record as opened; null for a body of another shape (it is dropped). */
export function readRelayed(message: unknown): RelayedCall | null {
  const relayed = message as Partial<RelayedCall> | null;
  const call = relayed?.call as Partial<CallRecord> | undefined;
  if (relayed?.v !== 1 || typeof relayed.origin !== 'string' || typeof relayed.agentId !== 'string' || typeof call !== 'object' || call === null) return null;
  if (typeof call.id !== 'string' || typeof call.sessionId !== 'string' || typeof call.tool !== 'string' || typeof call.outcome !== 'string') return null;
  return relayed as RelayedCall;
}

export class CallEventRelay {
  private closed = false;

  private constructor(private readonly subscription: Subscription, private readonly stopObserving: () => void) {}

  /** Starts relaying `events` over the sealed bus; it stops by itself when the connection closes. */
  static start(bus: SealedBus, prefix: string, events: CallEvents): CallEventRelay {
    const { nc } = bus;
    const subject = natsSubjects(prefix).events;
    const origin = events.epoch;
    const heard = new ReplayGuard();
    const subscription = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        const opened = bus.open<unknown>(msg, ['event']);
        if (opened === null) return;
        const relayed = readRelayed(opened.body);
        if (relayed === null) return bus.drops.drop('malformed', subject);
        // NATS echoes a connection's own messages back to it: those were this feed's already.
        if (relayed.origin === origin) return;
        if (!heard.firstTime(opened.header.c, opened.header.e)) return bus.drops.drop('replayed', subject);
        events.publish(relayed.call, relayed.agentId, relayed.origin);
      },
    });
    const stopObserving = events.observe((event) => {
      if (nc.isClosed()) return;
      const body = relayBody({ origin, agentId: event.agentId, call: event.call }, nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD);
      if (body === null) return;
      try {
        bus.publish(subject, 'event', { c: randomBytes(16).toString('hex'), ttlMs: MESSAGE_TTL_MS }, body);
      } catch {
        // The connection closed or is draining: the stream of other replicas misses this one; the store has it.
      }
    });
    const relay = new CallEventRelay(subscription, stopObserving);
    void nc.closed().then(() => relay.close());
    return relay;
  }

  /** Stops publishing and hearing (the server is closing, or the connection closed). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopObserving();
    if (!this.subscription.isClosed()) this.subscription.unsubscribe();
  }
}
