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
 * Pure: header values and answers as data; the router and the server write them.
 */
import type { ErrorBody } from './http-error.js';

export const BEARER_REALM = 'subako';

/** The error code of every answer on an OAuth path. */
export const NO_OAUTH_CODE = 'no_oauth';

/**
 * The `WWW-Authenticate` value of a 401. `description` is RFC 6750's error_description: printable ASCII
 * without `"` or `\`, which is checked so a caller cannot break the header's quoting.
 */
export function bearerChallenge(problem: { tokenSent: false } | { tokenSent: true; description: string }): string {
  if (!problem.tokenSent) return `Bearer realm="${BEARER_REALM}"`;
  if (!/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/.test(problem.description)) {
    throw new RangeError('an error_description is printable ASCII without " or \\');
  }
  return `Bearer realm="${BEARER_REALM}", error="invalid_token", error_description="${problem.description}"`;
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
