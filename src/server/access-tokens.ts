/**
 * Checking an access token from the door's authorization server: a JWT (RFC 9068's profile) signed with one of
 * its keys (jwks-fetch.ts), by an asymmetric algorithm only (never `none`, never an HMAC whose "key" would be
 * public), issued by the configured issuer, for the configured audience (a token for another resource is
 * refused: a client must not be able to replay here a token meant elsewhere, RFC 8707 / the MCP spec's
 * "token passthrough"), and within its lifetime (exp, nbf, with CLOCK_SKEW_SECONDS of leeway). Every refusal
 * is an AccessTokenError whose reason the door turns into its challenge; none carries the token.
 */
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { ReasonedError } from '../errors.js';
import { JwksCache, JwksError } from './jwks-fetch.js';

/** Asymmetric signatures only: `none` and HS* are refused before any key is looked up. */
export const ACCEPTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
export const CLOCK_SKEW_SECONDS = 30;

export type AccessTokenFailure = 'malformed' | 'signature' | 'algorithm' | 'issuer' | 'audience' | 'expired' | 'not_yet_valid' | 'claims' | 'keys_unavailable';

export class AccessTokenError extends ReasonedError<AccessTokenFailure> {
  constructor(reason: AccessTokenFailure, message: string) {
    super('oauth.invalid_token', reason, message);
  }
}

export interface AccessTokenPolicy {
  issuer: string;
  audience: string;
  jwksUrl: string;
}

export class AccessTokenVerifier {
  private readonly keys: JwksCache;

  constructor(private readonly policy: AccessTokenPolicy) {
    this.keys = new JwksCache(policy.jwksUrl);
  }

  /** The token's claims when it passes every check; an AccessTokenError saying which one it failed otherwise. */
  async verify(token: string): Promise<JWTPayload> {
    const { issuer, audience } = this.policy;
    try {
      const { payload } = await jwtVerify(token, this.keys.getKey, {
        issuer, audience, algorithms: ACCEPTED_ALGORITHMS, clockTolerance: CLOCK_SKEW_SECONDS, requiredClaims: ['exp'],
      });
      return payload;
    } catch (err) {
      throw refusal(err, this.policy);
    }
  }
}

/** What a failed check was, in words that name what would be accepted; never the token or its claims' values but the audience's and issuer's. */
function refusal(err: unknown, { issuer, audience }: AccessTokenPolicy): AccessTokenError {
  if (err instanceof JwksError) return new AccessTokenError('keys_unavailable', `the token could not be checked: ${err.message}`);
  if (err instanceof joseErrors.JWTExpired) return new AccessTokenError('expired', 'the access token has expired; get a new one from the authorization server');
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return new AccessTokenError('audience', `the access token is not for this server: its audience must be ${audience}`);
    if (err.claim === 'iss') return new AccessTokenError('issuer', `the access token was not issued by ${issuer}`);
    if (err.claim === 'nbf') return new AccessTokenError('not_yet_valid', 'the access token is not valid yet (nbf)');
    return new AccessTokenError('claims', `the access token's ${err.claim} claim is missing or wrong`);
  }
  if (err instanceof joseErrors.JOSEAlgNotAllowed) {
    return new AccessTokenError('algorithm', `the access token is not signed with an accepted algorithm (${ACCEPTED_ALGORITHMS.join(', ')})`);
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed || err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWKSMultipleMatchingKeys) {
    return new AccessTokenError('signature', `the access token's signature is not one of ${issuer}'s keys`);
  }
  if (err instanceof joseErrors.JOSEError) return new AccessTokenError('malformed', 'the bearer token is not a signed JWT access token');
  throw err;
}
