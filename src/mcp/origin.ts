/**
 * The Origin check the Streamable HTTP transport requires (a server must refuse a request whose Origin it
 * does not allow, with 403, against DNS rebinding and cross-site use from browsers). Pure.
 *
 * Allowed: no Origin header (not a browser: CLI clients, SDKs, servers), loopback origins (http or https on
 * localhost, 127.0.0.0/8 or [::1], any port) unless turned off, and the exact origins configured.
 * Refused: everything else, including the opaque origin `null`.
 */
export interface OriginPolicy {
  /** Exact origins (`scheme://host[:port]`) allowed besides loopback ones; `'*'` allows every origin. */
  allowedOrigins?: readonly string[];
  /** Allow loopback origins (default true). */
  allowLoopbackOrigins?: boolean;
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host === '[::1]') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function normalizeOrigin(text: string): string | undefined {
  try {
    const url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

export function isOriginAllowed(origin: string | null | undefined, policy: OriginPolicy = {}): boolean {
  if (origin === null || origin === undefined) return true;
  const allowed = policy.allowedOrigins ?? [];
  if (allowed.includes('*')) return true;
  const normalized = normalizeOrigin(origin.trim());
  if (normalized === undefined) return false;
  if ((policy.allowLoopbackOrigins ?? true) && isLoopbackHost(new URL(normalized).hostname)) return true;
  return allowed.some((entry) => normalizeOrigin(entry) === normalized);
}
