/**
 * A one-subject relay between replicas: what this replica sees itself is published sealed, and what the others
 * published is opened, checked and handed on here. The live call stream (nats-events.ts) and sessions' list
 * changes (nats-listings.ts) are both this; what differs is the body, which each reads and builds itself.
 *
 * The rules every relay keeps: a message that does not open (forged, altered, unsealed, another kind) is dropped
 * by the sealed bus and counted; a body of another shape is dropped as `malformed`; NATS echoes a connection's own
 * messages back, and those are this replica's already; each message is taken once, by its id, so one captured
 * and sent again is dropped as `replayed`. Best effort: publishing on a closed or draining connection loses the
 * message, which each relay's readers tolerate (the store, or a refresh, has the truth).
 */
import { randomBytes } from 'node:crypto';
import type { Subscription } from '@nats-io/transport-node';
import { MESSAGE_TTL_MS, type SealedBus } from './nats-calls.js';
import { ReplayGuard, type BusKind } from './nats-envelope.js';

export interface RelayRules<Body extends { origin: string }, Seen> {
  kind: BusKind;
  /** This replica's origin, written in what it publishes and recognised when NATS echoes it back. */
  origin: string;
  /** The body as opened; null for a body of another shape. */
  read(message: unknown): Body | null;
  /** Hands another replica's message on here. */
  deliver(body: Body): void;
  /** Calls `publish` for each thing this replica sees itself; returns how to stop. */
  observe(publish: (seen: Seen) => void): () => void;
  /** The body for what was seen; null when nothing is to be sent. */
  bodyOf(seen: Seen, maxPayload: number | undefined): Body | null;
}

export class BusRelay {
  private closed = false;

  private constructor(private readonly subscription: Subscription, private readonly stopObserving: () => void) {}

  /** Starts relaying on `subject`; it stops by itself when the connection closes. */
  static start<Body extends { origin: string }, Seen>(bus: SealedBus, subject: string, rules: RelayRules<Body, Seen>): BusRelay {
    const { nc } = bus;
    const heard = new ReplayGuard();
    const subscription = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        const opened = bus.open<unknown>(msg, [rules.kind]);
        if (opened === null) return;
        const relayed = rules.read(opened.body);
        if (relayed === null) return bus.drops.drop('malformed', subject);
        if (relayed.origin === rules.origin) return;
        if (!heard.firstTime(opened.header.c, opened.header.e)) return bus.drops.drop('replayed', subject);
        rules.deliver(relayed);
      },
    });
    const stopObserving = rules.observe((seen) => {
      if (nc.isClosed()) return;
      const body = rules.bodyOf(seen, nc.info?.max_payload);
      if (body === null) return;
      try {
        bus.publish(subject, rules.kind, { c: randomBytes(16).toString('hex'), ttlMs: MESSAGE_TTL_MS }, body);
      } catch {
        // The connection closed or is draining: the other replicas miss this one (see the module comment).
      }
    });
    const relay = new BusRelay(subscription, stopObserving);
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
