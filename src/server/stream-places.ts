/**
 * How the live call stream's places are shared among keys (the rule call-stream.ts applies before a stream
 * opens). Anyone holding a key, a read key too, may open streams, and each holds a place until it ends; so one
 * key holds at most `perKey` places, and the last `perKey` places are kept for admin keys: read keys together
 * never take them, so no reader — nor every reader at once — shuts an admin out (who can then revoke them).
 */
import type { ApiKeyScope } from '../platform/index.js';
import { HttpError } from './http-error.js';

/** What a stream knows of the key that opened it (never its hash). */
export interface StreamHolder {
  id: string;
  /** The key's first characters, to name it in messages. */
  prefix: string;
  scope: ApiKeyScope;
}

export interface PlaceLimits {
  /** Places in all (the live feed's subscribers). */
  max: number;
  /** Places one key may hold; as many are kept for admin keys. Less than `max`. */
  perKey: number;
}

/** The places held now: in all, by read keys together, and by the key asking. */
export interface PlacesHeld {
  all: number;
  byReaders: number;
  byKey: number;
}

/** What a refusal tells the client to wait before it tries again (seconds, the `Retry-After` header). */
export const RETRY_AFTER_S = 2;

/** Why this key may not open one more stream now, or null when it may. */
export function placeRefusal(held: PlacesHeld, holder: StreamHolder, limits: PlaceLimits): HttpError | null {
  const retry = { 'retry-after': String(RETRY_AFTER_S) };
  if (held.byKey >= limits.perKey) {
    return new HttpError(429, 'too_many_streams_for_key', `the API key ${holder.prefix}… holds ${limits.perKey} call streams, as many as one key may hold; ` +
      'close one of them first (one stream with no filter hears every call)', undefined, retry);
  }
  if (held.all >= limits.max) {
    return new HttpError(503, 'too_many_streams', `${limits.max} call streams are open, as many as this server holds; try again later`, undefined, retry);
  }
  const forReaders = limits.max - limits.perKey;
  if (holder.scope !== 'admin' && held.byReaders >= forReaders) {
    return new HttpError(503, 'too_many_streams', `read keys hold ${forReaders} call streams, as many as they may together; ` +
      `the last ${limits.perKey} of the ${limits.max} places are kept for admin keys; try again later`, undefined, retry);
  }
  return null;
}
