/**
 * How the server answers a request without a usable bearer token, and the OAuth discovery paths it does not
 * serve. Our bearer tokens (API keys, session tokens) are handed out by the API, not by an OAuth flow, so a
 * client must be told "bring the token" rather than be sent looking for an authorization server:
 *
 * - every 401 carries `WWW-Authenticate: Bearer realm="subako"` (RFC 7235 asks a 401 to name its scheme),
 *   with `error="invalid_token"` and a description when a token came and was wrong (RFC 6750 §3: a request
 *   without credentials gets no error code), and never `resource_metadata` (RFC 9728 §5.1: that parameter is
 *   what points a client at an OAuth flow);
 * - the OAuth discovery documents and endpoints a client probes next (RFC 9728's protected resource metadata,
 *   RFC 8414's authorization server metadata, OIDC discovery, and the 2025-03-26 fallbacks `/register`,
 *   `/authorize`, `/token` on the server's origin) answer 404 with a JSON error that says so, instead of a
 *   generic "no route".
 *
 * With OAuth at the door on (oauth-door.ts), the MCP endpoints are protected resources of an external
 * authorization server instead: their challenges carry `resource_metadata` (RFC 9728 §5.1) and the scopes a token
 * needs (RFC 6750 §3), and a token short of scope is `insufficient_scope` (a 403). The discovery paths of the
 * protected resources are then served (protected-resource.ts); the others still answer 404.
 *
 * Pure: header values and answers as data; the router and the server write them.
 */
import type { ErrorBody } from './http-error.js';

export const BEARER_REALM = 'subako';

/** The error code of every answer on an OAuth path. */
export const NO_OAUTH_CODE = 'no_oauth';

/** What a door challenge adds: where the protected resource's metadata is, and the scopes a token needs. */
export interface DoorChallenge {
  resourceMetadata: string;
  scopes: readonly string[];
}

/** A token came and was refused: wrong (`invalid_token`, 401) or short of scope (`insufficient_scope`, 403). */
export type BearerProblem = { tokenSent: false } | { tokenSent: true; description: string; error?: 'invalid_token' | 'insufficient_scope' };

/**
 * The `WWW-Authenticate` value of a 401 (or of the door's 403). `description` is RFC 6750's error_description,
 * and the door's URL and scopes are quoted too: printable ASCII without `"` or `\`, which is checked so a caller
 * cannot break the header's quoting.
 */
export function bearerChallenge(problem: BearerProblem, door?: DoorChallenge): string {
  const parts = [`realm="${quotable(BEARER_REALM)}"`];
  if (problem.tokenSent) parts.push(`error="${problem.error ?? 'invalid_token'}"`, `error_description="${quotable(problem.description)}"`);
  if (door) {
    parts.push(`resource_metadata="${quotable(door.resourceMetadata)}"`);
    if (door.scopes.length > 0) parts.push(`scope="${quotable(door.scopes.join(' '))}"`);
  }
  return `Bearer ${parts.join(', ')}`;
}

function quotable(text: string): string {
  if (!/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/.test(text)) throw new RangeError('a challenge parameter is printable ASCII without " or \\');
  return text;
}

const OAUTH_WELL_KNOWN = ['/.well-known/oauth-protected-resource', '/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'];
const OAUTH_ENDPOINTS = new Set(['/register', '/authorize', '/token']);

/** Whether a path is one a client probes for an OAuth flow (a well-known document, with or without a path suffix). */
export function isOAuthDiscoveryPath(pathname: string): boolean {
  if (OAUTH_ENDPOINTS.has(pathname)) return true;
  return OAUTH_WELL_KNOWN.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));
}

/** The 404 body on an OAuth path: what the server offers instead. */
export function noOAuthBody(pathname: string): ErrorBody {
  return {
    error: {
      code: NO_OAUTH_CODE,
      message:
        `${pathname}: this server has no OAuth authorization server and no dynamic client registration. ` +
        'Send "Authorization: Bearer <token>": an API key, or for a session\'s MCP endpoint the session token ' +
        'returned when the session was created (or use the session\'s capability URL, which needs no header).',
    },
  };
}
