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
import { isListingChange, type ListingChange } from '../../mcp/index.js';
import type { ChangeOrigin, SessionListens } from '../session-listens.js';
import { natsSubjects, type SealedBus } from './nats-calls.js';
import { BusRelay } from './nats-relay.js';

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

/** Relays sessions' changes between replicas over the sealed bus (nats-relay.ts has the rules every relay keeps). */
export type ListingRelay = BusRelay;
export const ListingRelay = {
  /** Starts relaying `listens`' changes; it stops by itself when the connection closes. */
  start(bus: SealedBus, prefix: string, listens: ListingSink): ListingRelay {
    const origin = randomBytes(12).toString('hex');
    return BusRelay.start<RelayedListing, Omit<RelayedListing, 'v' | 'origin'>>(bus, natsSubjects(prefix).listings, {
      kind: 'listing',
      origin,
      read: readListing,
      deliver: (relayed) => listens.deliverRelayed(relayed.sessionId, relayed.change, relayed.from),
      observe: (publish) => listens.observe((sessionId, change, from) => publish({ sessionId, change, from })),
      bodyOf: (seen) => ({ v: 1, origin, ...seen }),
    });
  },
};
