/**
 * The authorization server's signing keys (a JWK set, RFC 7517), fetched from its `jwks_uri` and kept: bounded
 * in time (JWKS_TIMEOUT_MS) and size (MAX_JWKS_BYTES), so an authorization server that is slow or answers a
 * flood cannot hold or fill the server; kept for JWKS_MAX_AGE_MS, and fetched again sooner only when a token
 * names a key the set does not hold (the server rotated its keys), at most once per JWKS_REFETCH_COOLDOWN_MS so
 * that tokens naming made-up keys cannot make us hammer it. Concurrent lookups share one fetch.
 */
import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { ReasonedError } from '../errors.js';

export const JWKS_TIMEOUT_MS = 5_000;
export const MAX_JWKS_BYTES = 256 * 1024;
export const JWKS_MAX_AGE_MS = 10 * 60_000;
export const JWKS_REFETCH_COOLDOWN_MS = 30_000;

export type JwksFailure = 'unreachable' | 'too_large' | 'not_a_jwks';

/** The keys could not be had: the token cannot be checked, so it is refused (never let in). */
export class JwksError extends ReasonedError<JwksFailure> {
  constructor(reason: JwksFailure, message: string) {
    super('oauth.jwks', reason, message);
  }
}

export class JwksCache {
  private keys: { getKey: JWTVerifyGetKey; fetchedAt: number } | null = null;
  private fetching: Promise<JWTVerifyGetKey> | null = null;
  private lastFetchAt = -Infinity;

  constructor(private readonly url: string, private readonly now: () => number = Date.now) {}

  /** jose's key lookup: the key the token's header names, from the set as kept or fetched again. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    const kept = this.keys;
    const fresh = kept !== null && this.now() - kept.fetchedAt < JWKS_MAX_AGE_MS;
    const getKey = fresh ? kept.getKey : await this.refetch();
    try {
      return await getKey(header, token);
    } catch (err) {
      // A key we do not hold: the server may have rotated its keys since we fetched them.
      if (!(err instanceof joseErrors.JWKSNoMatchingKey) || this.now() - this.lastFetchAt < JWKS_REFETCH_COOLDOWN_MS) throw err;
      return (await this.refetch())(header, token);
    }
  };

  private refetch(): Promise<JWTVerifyGetKey> {
    this.fetching ??= this.fetchSet().finally(() => { this.fetching = null; });
    return this.fetching;
  }

  private async fetchSet(): Promise<JWTVerifyGetKey> {
    this.lastFetchAt = this.now();
    const set = await fetchJwks(this.url);
    const getKey = createLocalJWKSet(set);
    this.keys = { getKey, fetchedAt: this.now() };
    return getKey;
  }
}

/** One bounded GET of a JWK set. */
export async function fetchJwks(url: string): Promise<JSONWebKeySet> {
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: 'application/jwk-set+json, application/json' }, redirect: 'error', signal: AbortSignal.timeout(JWKS_TIMEOUT_MS) });
  } catch (err) {
    const why = (err as Error).name === 'TimeoutError' ? `no answer within ${JWKS_TIMEOUT_MS} ms` : 'the request failed';
    throw new JwksError('unreachable', `the authorization server's keys at ${url} could not be fetched: ${why}`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new JwksError('unreachable', `the authorization server's keys at ${url} could not be fetched: HTTP ${response.status}`);
  }
  const text = await readCapped(response, url);
  let set: unknown;
  try {
    set = JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error; // expected: not JSON
    set = undefined;
  }
  if (typeof set !== 'object' || set === null || !Array.isArray((set as { keys?: unknown }).keys)) {
    throw new JwksError('not_a_jwks', `${url} did not answer a JWK set (a JSON object with "keys")`);
  }
  return set as JSONWebKeySet;
}

async function readCapped(response: Response, url: string): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  const tooLarge = (): JwksError => new JwksError('too_large', `the JWK set at ${url} is larger than ${MAX_JWKS_BYTES} bytes`);
  if (declared > MAX_JWKS_BYTES) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_JWKS_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
