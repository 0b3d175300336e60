/**
 * Sessions' changes across replicas (`subako serve --nats`): a session's client may listen on one replica while the
 * change is seen on another — a refresh there found its tools changed, or its remote server told that replica's
 * listeners. Each replica publishes the changes it saw itself (session-listens.ts observes them) to
 * `<prefix>.listings`, and hands every other replica's to its own SessionListens, which drops its cached toolbox for
 * a list change and tells the session's listeners here (unless this replica hears that server itself).
 *
 * Sealed like every message on the bus (nats-envelope.ts), as kind `listing`: a message that does not open —
 * forged or altered by someone without the key, or unsealed — is dropped and counted (the bus's drop metrics), so
 * nobody on NATS can make a session's clients refetch, or announce a resource update of their choosing; each is
 * taken once, by its id, so one captured and sent again is dropped as replayed.
 *
 * Best effort: a replica away from NATS misses what was published meanwhile; its toolboxes are rebuilt within a
 * minute anyway, and a client that reconnects lists again.
 */
import { randomBytes } from 'node:crypto';
import type { Subscription } from '@nats-io/transport-node';
import { isListingChange, type ListingChange } from '../../mcp/index.js';
import type { ChangeOrigin, SessionListens } from '../session-listens.js';
import { MESSAGE_TTL_MS, natsSubjects, type SealedBus } from './nats-calls.js';
import { ReplayGuard } from './nats-envelope.js';

/** One change on `<prefix>.listings`. */
export interface RelayedListing {
  v: 1;
  /** The publishing replica. */
  origin: string;
  sessionId: string;
  from: ChangeOrigin;
  change: ListingChange;
}

const SESSION_ID = /^[a-z]{2,5}_[0-9a-f]{28}$/;

/** A relayed change as opened; null for a body of another shape (it is dropped). */
export function readListing(message: unknown): RelayedListing | null {
  const relayed = message as Partial<RelayedListing> | null;
  if (typeof relayed !== 'object' || relayed === null || relayed.v !== 1 || typeof relayed.origin !== 'string') return null;
  if (typeof relayed.sessionId !== 'string' || !SESSION_ID.test(relayed.sessionId)) return null;
  if (relayed.from !== 'upstream' && relayed.from !== 'session') return null;
  if (!isListingChange(relayed.change)) return null;
  return relayed as RelayedListing;
}

/** Where listings go in a deployment's two sides. */
export type ListingSink = Pick<SessionListens, 'observe' | 'deliverRelayed'>;

export class ListingRelay {
  private closed = false;

  private constructor(private readonly subscription: Subscription, private readonly stopObserving: () => void) {}

  /** Starts relaying `listens`' changes over the sealed bus; it stops by itself when the connection closes. */
  static start(bus: SealedBus, prefix: string, listens: ListingSink): ListingRelay {
    const { nc } = bus;
    const subject = natsSubjects(prefix).listings;
    const origin = randomBytes(12).toString('hex');
    const heard = new ReplayGuard();
    const subscription = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        const opened = bus.open<unknown>(msg, ['listing']);
        if (opened === null) return;
        const relayed = readListing(opened.body);
        if (relayed === null) return bus.drops.drop('malformed', subject);
        // NATS echoes a connection's own messages back to it: this replica told its listeners already.
        if (relayed.origin === origin) return;
        if (!heard.firstTime(opened.header.c, opened.header.e)) return bus.drops.drop('replayed', subject);
        listens.deliverRelayed(relayed.sessionId, relayed.change, relayed.from);
      },
    });
    const stopObserving = listens.observe((sessionId, change, from) => {
      if (nc.isClosed()) return;
      const body: RelayedListing = { v: 1, origin, sessionId, from, change };
      try {
        bus.publish(subject, 'listing', { c: randomBytes(16).toString('hex'), ttlMs: MESSAGE_TTL_MS }, body);
      } catch {
        // The connection closed or is draining: other replicas' listeners miss this one (their toolboxes refresh anyway).
      }
    });
    const relay = new ListingRelay(subscription, stopObserving);
    void nc.closed().then(() => relay.close());
    return relay;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopObserving();
    if (!this.subscription.isClosed()) this.subscription.unsubscribe();
  }
}
