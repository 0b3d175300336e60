/**
 * How a client authenticates to an MCP server, a sum type as the spec has it:
 * `headers(values)` — static headers whose values are kept as Secrets — or `oauth(name)` — a named credential
 * made out of band by `subako mcp login`; programs only ever name it, the token never appears in them.
 */
import { McpAuthError } from './errors.js';
import { accessTokenFor as storeAccessTokenFor } from './oauth/index.js';
import { Secret } from '../common/index.js';

export interface HeadersAuth {
  readonly kind: 'headers';
  /** Header names as given; every value is a Secret (plain strings are wrapped: a header is usually a credential). */
  readonly values: Readonly<Record<string, Secret>>;
}

export interface OAuthAuth {
  readonly kind: 'oauth';
  readonly name: string;
}

export type Auth = HeadersAuth | OAuthAuth;

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Headers the transport owns: a static header must not override the protocol's own. */
const RESERVED = new Set(['content-type', 'accept', 'content-length', 'host', 'mcp-session-id', 'mcp-protocol-version', 'mcp-method', 'mcp-name']);

export function headers(values: Readonly<Record<string, string | Secret>> = {}): HeadersAuth {
  const wrapped: Record<string, Secret> = {};
  for (const [name, value] of Object.entries(values)) {
    if (!HEADER_NAME.test(name)) throw new TypeError(`"${name}" is not a valid HTTP header name`);
    if (RESERVED.has(name.toLowerCase())) throw new TypeError(`the header "${name}" is set by the MCP transport itself`);
    if (typeof value !== 'string' && !(value instanceof Secret)) {
      throw new TypeError(`the value of header "${name}" must be a string or a Secret`);
    }
    const secret = Secret.from(value);
    if (/[\r\n\0]/.test(secret.reveal())) throw new TypeError(`the value of header "${name}" contains a line break or NUL`);
    wrapped[name] = secret;
  }
  return Object.freeze({ kind: 'headers', values: Object.freeze(wrapped) });
}

export function oauth(name: string): OAuthAuth {
  if (typeof name !== 'string' || name.length === 0) throw new TypeError('mcp.oauth needs the name of a stored credential');
  return Object.freeze({ kind: 'oauth', name });
}

export function isAuth(value: unknown): value is Auth {
  if (typeof value !== 'object' || value === null) return false;
  const kind = (value as { kind?: unknown }).kind;
  return kind === 'headers' || kind === 'oauth';
}

/**
 * A string that is equal for equal auth and different otherwise, without containing any secret value:
 * header values enter only as keyed fingerprints.
 */
export function authIdentity(auth: Auth): string {
  if (auth.kind === 'oauth') return `oauth:${JSON.stringify(auth.name)}`;
  const entries = Object.entries(auth.values)
    .map(([name, value]) => [name.toLowerCase(), value.fingerprint()] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `headers:${JSON.stringify(entries)}`;
}

/**
 * Where `mcp.oauth(name)` gets a fresh access token; replaceable (tests, a host with its own vault).
 * `forceRefresh` asks for a new token even if the current one looks valid (the server just refused it).
 */
export type AccessTokenSource = (name: string, options?: { forceRefresh?: boolean }) => Promise<Secret>;

let accessTokenSource: AccessTokenSource | undefined;

/** Replaces the access-token source (`undefined` restores the default: the OAuth credential store). */
export function setAccessTokenSource(source: AccessTokenSource | undefined): void {
  accessTokenSource = source;
}

/** A fresh access token for a named credential, or an McpAuthError (missing, or expired beyond refresh). */
export async function accessTokenFor(name: string, options: { forceRefresh?: boolean } = {}): Promise<Secret> {
  const token = await (accessTokenSource ?? storeAccessTokenFor)(name, options);
  if (!(token instanceof Secret)) {
    throw new McpAuthError('unavailable', `the credential store returned no token for "${name}"`, { credential: name });
  }
  return token;
}
