/**
 * Vault credentials, pure: which credential rides on a request to which origin. A function's grant lists
 * origins; the session's vault holds credentials keyed by origin. A credential is attached only to a
 * request whose origin it names, and only when the function's grant lists that origin. Values are never
 * put in a message: only origins and header names are.
 */
import { DEFAULT_HTTPS_PORT, canonicalHost } from './allowlist.js';
import { EgressError } from './errors.js';
import { CONNECTION_HEADERS, headerNameProblem, isValidHeaderValue } from './headers.js';

export interface VaultCredential {
  /** `https://host[:port]`, the origin the headers are sent to. */
  origin: string;
  /** Header name to secret value, e.g. `{ authorization: "Bearer …" }`. */
  headers: Record<string, string>;
}

/** `https://host[:port]` in canonical form (IDNA, lowercase, no trailing dot, default port omitted). */
export function originOfUrl(url: URL): string {
  const host = canonicalHost(url.hostname) ?? url.hostname;
  const port = url.port === '' ? DEFAULT_HTTPS_PORT : Number(url.port);
  return port === DEFAULT_HTTPS_PORT ? `https://${host}` : `https://${host}:${port}`;
}

/** Canonical form of an origin written by a person (grant or vault entry); null when it is not one. */
export function canonicalOrigin(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a URL
    return null;
  }
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '') return null;
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') return null;
  if (canonicalHost(url.hostname) === null) return null;
  return originOfUrl(url);
}

/** Lowercased headers of a credential, or null when it cannot be sent as it stands. */
export function usableCredentialHeaders(credential: VaultCredential): Record<string, string> | null {
  const entries = Object.entries(credential.headers ?? {});
  if (entries.length === 0) return null;
  const headers: Record<string, string> = {};
  for (const [rawName, value] of entries) {
    const name = rawName.toLowerCase();
    if (headerNameProblem(name) !== null || CONNECTION_HEADERS.has(name)) return null;
    if (typeof value !== 'string' || !isValidHeaderValue(value)) return null;
    headers[name] = value;
  }
  return headers;
}

export interface CredentialPolicy {
  /** Canonical origins granted to the function. */
  grants: ReadonlySet<string>;
  vault: readonly VaultCredential[];
}

/**
 * The credential headers for a request to `origin`, or null when the function holds no grant for it.
 * A granted origin must have exactly one usable credential in the vault: none, several, or only unusable
 * ones are `credential_unavailable`.
 */
export function credentialForOrigin(origin: string, policy: CredentialPolicy): Record<string, string> | null {
  if (!policy.grants.has(origin)) return null;
  const matching = policy.vault.filter((c) => canonicalOrigin(c.origin) === origin);
  const usable = matching.map(usableCredentialHeaders).filter((h): h is Record<string, string> => h !== null);
  if (matching.length !== 1 || usable.length !== 1) {
    const found = matching.length === 0 ? 'none' : `${matching.length}, ${usable.length} usable`;
    throw new EgressError(
      'credential_unavailable',
      `this function is granted ${origin} but the session's vaults hold no single usable credential for it (found ${found})`,
    );
  }
  return usable[0];
}

/** Refuses a request whose own headers collide with the ones the credential for its origin sets. */
export function assertNoCredentialHeader(
  guestHeaders: Record<string, string>,
  credential: Record<string, string>,
  origin: string,
): void {
  const clashes = Object.keys(guestHeaders).filter((name) => Object.hasOwn(credential, name));
  if (clashes.length > 0) {
    throw new EgressError(
      'credential_header',
      `the request sets ${clashes.join(', ')}, which the stored credential for ${origin} sets; leave it out`,
    );
  }
}
