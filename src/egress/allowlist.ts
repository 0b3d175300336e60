/**
 * The per-function host allowlist, pure. Deny by default: a host is reachable only when an entry admits it.
 *
 * Entry forms:
 *  - `api.example.com`        that exact name, port 443
 *  - `api.example.com:8443`   that exact name, that port only
 *  - `*.example.com[:port]`   any name strictly below example.com, at any depth (`a.example.com`,
 *                             `a.b.example.com`); the bare apex `example.com` is NOT matched — list it too
 *  - `203.0.113.7[:port]`, `[2001:db8::1][:port]`   an IP literal, matched only when listed exactly
 *                             (wildcards never match addresses)
 * Names are compared after IDNA normalisation (node:url domainToASCII, as the URL parser does),
 * case-insensitively, with a trailing dot stripped. IP literals are compared in canonical form.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';

export const DEFAULT_HTTPS_PORT = 443;

export interface AllowEntry {
  wildcard: boolean;
  /** Canonical host: an ASCII lowercase name without trailing dot, a dotted quad, or `[v6]`. */
  host: string;
  isAddress: boolean;
  port: number;
}

/** Canonical host name, address `[v6]` or dotted quad; null when the text is not a usable host. */
export function canonicalHost(host: string): string | null {
  let text = host.trim();
  if (text === '') return null;
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (isIPv6(bare)) text = `[${bare}]`;
  let hostname: string;
  try {
    hostname = new URL(`https://${text}/`).hostname;
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a host
    return null;
  }
  if (hostname.startsWith('[') || isIPv4(hostname)) return hostname;
  if (hostname.endsWith('.')) hostname = hostname.slice(0, -1);
  const ascii = domainToASCII(hostname).toLowerCase();
  if (ascii === '' || ascii.startsWith('.') || ascii.includes('..')) return null;
  return ascii;
}

export function isAddressHost(canonical: string): boolean {
  return canonical.startsWith('[') || isIPv4(canonical);
}

/** Parses one allowlist entry; returns a sentence saying what is wrong when it cannot be used. */
export function parseAllowEntry(entry: string): AllowEntry | { problem: string } {
  const text = entry.trim();
  const wildcard = text.startsWith('*.');
  const rest = wildcard ? text.slice(2) : text;
  if (rest === '' || /[/?#@\s*\\]/.test(rest)) {
    return { problem: `allow entry ${JSON.stringify(entry)} is not a host, *.domain, or either with :port` };
  }
  let url: URL;
  try {
    url = new URL(`https://${rest}/`);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a host[:port]
    return { problem: `allow entry ${JSON.stringify(entry)} is not a valid host[:port]` };
  }
  const port = url.port === '' ? DEFAULT_HTTPS_PORT : Number(url.port);
  if (port < 1 || port > 65535) return { problem: `allow entry ${JSON.stringify(entry)} has an invalid port` };
  const host = canonicalHost(url.hostname);
  if (host === null) return { problem: `allow entry ${JSON.stringify(entry)} has an invalid host name` };
  const isAddress = isAddressHost(host);
  if (wildcard && isAddress) {
    return { problem: `allow entry ${JSON.stringify(entry)}: wildcards apply to names, not IP addresses` };
  }
  return { wildcard, host, isAddress, port };
}

function entryAdmits(entry: AllowEntry, host: string, isAddress: boolean, port: number): boolean {
  if (entry.port !== port) return false;
  if (entry.wildcard) return !isAddress && host.endsWith(`.${entry.host}`);
  return entry.host === host;
}

/**
 * Whether `host` at `port` is admitted by `allowlist` (entries as strings or already parsed). Entries that
 * do not parse admit nothing. Callers should validate entries up front (see parseAllowEntry).
 */
export function matchesAllowlist(
  host: string,
  port: number,
  allowlist: readonly (string | AllowEntry)[],
): boolean {
  const canonical = canonicalHost(host);
  if (canonical === null) return false;
  const isAddress = isAddressHost(canonical);
  return allowlist.some((raw) => {
    const entry = typeof raw === 'string' ? parseAllowEntry(raw) : raw;
    return !('problem' in entry) && entryAdmits(entry, canonical, isAddress, port);
  });
}
