/**
 * OAuth at the door (optional, per deployment): the MCP endpoints of agents and sessions as protected resources
 * of the organisation's authorization server, so that a standard MCP client logs in with its identity provider.
 * What this file decides, for a request to a protected endpoint:
 *
 * - no token: 401 with `WWW-Authenticate: Bearer …, resource_metadata="…", scope="…"` (RFC 9728 §5.1), which
 *   starts the client's OAuth flow;
 * - a token that fails a check (signature, issuer, audience, lifetime: access-tokens.ts): 401 `invalid_token`
 *   naming what was wrong (the audience it must be for, when that was it), never the token;
 * - a token short of the configured scopes: 403 `insufficient_scope` naming them (RFC 6750 §3.1);
 * - a good token: the platform user its claim names (access-token-claims.ts). A user not known here is refused
 *   (403 `unknown_user`) or created, as the deployment says (`oauthUnknownUsers`).
 *
 * The token is checked here and goes no further: the platform is told the user, never handed the token, so it
 * cannot reach an upstream (the MCP spec's "no token passthrough").
 */
import { ValidationError } from '../errors.js';
import { missingScopes, userIdOf } from './access-token-claims.js';
import { AccessTokenError, AccessTokenVerifier, type AccessTokenPolicy } from './access-tokens.js';
import { bearerChallenge, type DoorChallenge } from './bearer-challenge.js';
import { HttpError } from './http-error.js';
import { metadataUrlOf, protectedResourceMetadata, type ProtectedResourceMetadata } from './protected-resource.js';

export interface OAuthDoorOptions extends AccessTokenPolicy {
  /** Scopes every token must carry; none when empty. */
  scopes: readonly string[];
  /** The claim naming the platform user (`sub` by default). */
  userClaim: string;
  unknownUsers: 'refuse' | 'create';
}

/** The platform's users as the door needs them (platform/users.ts UserService). */
export interface DoorUsers {
  find(id: string): Promise<object | null>;
  ensure(id: string): Promise<object>;
}

export class OAuthDoor {
  private readonly verifier: AccessTokenVerifier;

  constructor(readonly options: OAuthDoorOptions, private readonly users: DoorUsers) {
    this.verifier = new AccessTokenVerifier(options);
  }

  metadata(resourceUrl: string): ProtectedResourceMetadata {
    return protectedResourceMetadata(resourceUrl, this.options);
  }

  /** The 401 of a request to `resourceUrl` that brought no token. */
  noToken(resourceUrl: string, message: string): HttpError {
    return new HttpError(401, 'unauthorized', `${message}; or sign in with ${this.options.issuer} (the resource metadata is at ${metadataUrlOf(resourceUrl)})`,
      undefined, { 'www-authenticate': bearerChallenge({ tokenSent: false }, this.challenge(resourceUrl)) });
  }

  /**
   * The platform user a bearer token for `resourceUrl` stands for, or the door's refusal (an HttpError with its
   * challenge).
   */
  async admit(token: string, resourceUrl: string): Promise<string> {
    let claims: Record<string, unknown>;
    try {
      claims = await this.verifier.verify(token);
    } catch (err) {
      if (!(err instanceof AccessTokenError)) throw err;
      throw this.invalid(resourceUrl, err.message);
    }
    const missing = missingScopes(claims, this.options.scopes);
    if (missing.length > 0) {
      const message = `the access token lacks the scope ${missing.join(' ')}; ask ${this.options.issuer} for ${this.options.scopes.join(' ')}`;
      throw new HttpError(403, 'insufficient_scope', message, undefined,
        { 'www-authenticate': bearerChallenge({ tokenSent: true, error: 'insufficient_scope', description: message }, this.challenge(resourceUrl)) });
    }
    const user = userIdOf(claims, this.options.userClaim);
    if ('kind' in user) throw this.invalid(resourceUrl, user.message);
    let known: object | null;
    try {
      known = this.options.unknownUsers === 'create' ? await this.users.ensure(user.userId) : await this.users.find(user.userId);
    } catch (err) {
      // The claim is not a user id's form: named as the token's fault, with the rule the platform gave.
      if (err instanceof ValidationError) throw this.invalid(resourceUrl, `the access token's ${this.options.userClaim} claim is not a user id here: ${ruleOf(err)}`);
      throw err;
    }
    if (!known) {
      throw new HttpError(403, 'unknown_user',
        `the access token's user ${user.userId} is not a user here: an operator creates it (POST /v1/users), or the server is set to create users it does not know (oauthUnknownUsers "create")`);
    }
    return user.userId;
  }

  /** A 401 `invalid_token` for a token that came and was wrong. */
  invalid(resourceUrl: string, description: string): HttpError {
    return new HttpError(401, 'invalid_token', description, undefined,
      { 'www-authenticate': bearerChallenge({ tokenSent: true, description: headerSafe(description) }, this.challenge(resourceUrl)) });
  }

  private challenge(resourceUrl: string): DoorChallenge {
    return { resourceMetadata: metadataUrlOf(resourceUrl), scopes: this.options.scopes };
  }
}

/** Whether a bearer token has a JWT's shape (three base64url parts): only such a token is an access token to check. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/** The rule a user id breaks, from the platform's refusal, without the value (which came from the token). */
function ruleOf(err: ValidationError): string {
  const message = err.problems[0]?.message ?? '';
  const at = message.lastIndexOf('is not a user id: ');
  return at < 0 ? 'see the user id rule in the API' : message.slice(at + 'is not a user id: '.length);
}

/** An error_description keeps to printable ASCII without `"` or `\\` (bearer-challenge.ts checks it): anything else becomes `?`. */
function headerSafe(text: string): string {
  return text.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?');
}
