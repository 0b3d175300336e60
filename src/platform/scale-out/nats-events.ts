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
import type { CallEvent, CallEvents } from '../calls/index.js';
import { natsSubjects, type SealedBus } from './nats-calls.js';
import { BusRelay } from './nats-relay.js';
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

/** Relays call records between replicas over the sealed bus (nats-relay.ts has the rules every relay keeps). */
export type CallEventRelay = BusRelay;
export const CallEventRelay = {
  /** Starts relaying `events`; it stops by itself when the connection closes. */
  start(bus: SealedBus, prefix: string, events: CallEvents): CallEventRelay {
    const origin = events.epoch;
    return BusRelay.start<RelayedCall, CallEvent>(bus, natsSubjects(prefix).events, {
      kind: 'event',
      origin,
      read: readRelayed,
      // Tagged with its origin, so observers (this relay among them) do not hear it: an event is relayed once.
      deliver: (relayed) => events.publish(relayed.call, relayed.agentId, relayed.origin),
      observe: (publish) => events.observe(publish),
      bodyOf: (event, maxPayload) => relayBody({ origin, agentId: event.agentId, call: event.call }, maxPayload ?? DEFAULT_MAX_PAYLOAD),
    });
  },
};
