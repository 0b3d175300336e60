/**
 * The live call stream across replicas (`subako serve --nats`): each replica publishes the call records it
 * writes (already redacted, as stored) to `<prefix>.events`, and feeds those of every other replica into its own
 * feed (call-events.ts), tagged with their origin, so `GET /v1/calls/stream` on any replica hears every
 * replica's calls. An event is relayed once: a replica hears only its own calls to publish (observers do not
 * hear relayed events), and drops its own when NATS echoes them back.
 *
 * Best effort, like the feed itself: a replica away from NATS for a while misses what was published meanwhile;
 * the calls list (the store) stays complete, and a console reloads it on `event: reset`. A record larger than
 * the server's message size travels without its result and stderr (marked so); the stored record has them.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { CallEvents } from './call-events.js';
import { decodeMessage, encodeMessage, natsSubjects } from './nats-calls.js';
import type { CallRecord } from './store.js';

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

/**
 * The message for one record, within `maxBytes`: whole when it fits, else without its result and stderr, else
 * without its arguments too; null when even that does not fit (nothing is sent).
 */
export function relayMessage(event: Omit<RelayedCall, 'v'>, maxBytes: number): Uint8Array | null {
  const fits = (call: CallRecord): Uint8Array | null => {
    const bytes = encodeMessage({ v: 1, origin: event.origin, agentId: event.agentId, call } satisfies RelayedCall);
    return bytes.length <= maxBytes ? bytes : null;
  };
  const slim: CallRecord = { ...event.call, model: [{ type: 'text', text: NOT_RELAYED_TEXT }], stderrTail: '' };
  return fits(event.call) ?? fits(slim) ?? fits({ ...slim, arguments: NOT_RELAYED_TEXT });
}

/** A relayed record as received; null for anything else on the subject (it is dropped). */
export function readRelayed(data: Uint8Array): RelayedCall | null {
  let message: Partial<RelayedCall>;
  try {
    message = decodeMessage<Partial<RelayedCall>>(data);
  } catch {
    return null;
  }
  const call = message?.call as Partial<CallRecord> | undefined;
  if (message?.v !== 1 || typeof message.origin !== 'string' || typeof message.agentId !== 'string' || typeof call !== 'object' || call === null) return null;
  if (typeof call.id !== 'string' || typeof call.sessionId !== 'string' || typeof call.tool !== 'string' || typeof call.outcome !== 'string') return null;
  return message as RelayedCall;
}

export class CallEventRelay {
  private closed = false;

  private constructor(private readonly subscription: Subscription, private readonly stopObserving: () => void) {}

  /** Starts relaying `events` over `nc`; it stops by itself when the connection closes. */
  static start(nc: NatsConnection, prefix: string, events: CallEvents): CallEventRelay {
    const subject = natsSubjects(prefix).events;
    const origin = events.epoch;
    const subscription = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        const relayed = readRelayed(msg.data);
        // NATS echoes a connection's own messages back to it: those were this feed's already.
        if (relayed === null || relayed.origin === origin) return;
        events.publish(relayed.call, relayed.agentId, relayed.origin);
      },
    });
    const stopObserving = events.observe((event) => {
      if (nc.isClosed()) return;
      const message = relayMessage({ origin, agentId: event.agentId, call: event.call }, nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD);
      if (message === null) return;
      try {
        nc.publish(subject, message);
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
