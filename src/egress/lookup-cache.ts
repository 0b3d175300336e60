/**
 * A short-lived cache in front of a HostLookup, so a burst of requests to one host does not ask the system
 * resolver (often a network round trip: there is rarely a caching resolver on the host) every time.
 *
 * It caches names only, never verdicts: every request still checks the addresses it gets back against the
 * forbidden ranges and pins its connection to them (destination.ts), so an answer served from here is held
 * to exactly the rules of a fresh one. A DNS change is seen within `ttlMs`. Failures are not cached.
 */
import { systemLookup, type HostLookup, type ResolvedAddress } from './destination.js';

export interface LookupCacheOptions {
  /** How long an answer is reused (default 2 s). */
  ttlMs?: number;
  /** Names remembered at most; the oldest is forgotten first (default 256). */
  maxEntries?: number;
  /** The clock, in milliseconds; tests pass their own. */
  now?: () => number;
}

interface Entry {
  expires: number;
  answer: Promise<ResolvedAddress[]>;
}

export function cachingLookup(lookup: HostLookup, options: LookupCacheOptions = {}): HostLookup {
  const ttlMs = options.ttlMs ?? 2_000;
  const maxEntries = options.maxEntries ?? 256;
  const now = options.now ?? (() => performance.now());
  const entries = new Map<string, Entry>();

  return async (hostname) => {
    const at = now();
    let entry = entries.get(hostname);
    if (entry === undefined || entry.expires <= at) {
      if (entry !== undefined) entries.delete(hostname);
      // Concurrent requests for one name share the lookup in flight.
      const answer = lookup(hostname);
      entry = { expires: at + ttlMs, answer };
      const made = entry;
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
      entries.set(hostname, made);
      const forget = (): void => {
        if (entries.get(hostname) === made) entries.delete(hostname);
      };
      answer.then((found) => found.length === 0 && forget(), forget);
    }
    // A copy each time: the caller may keep or change what it is given.
    return (await entry.answer).map((a) => ({ address: a.address, family: a.family }));
  };
}

/** The system resolver behind the cache: what bridges use unless given a lookup. */
export const cachedSystemLookup: HostLookup = cachingLookup(systemLookup);
