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

/** `scheme://host[:port]` and the host of an http(s) origin, from one parse; undefined for anything else. */
function parseOrigin(text: string): { origin: string; hostname: string } | undefined {
  try {
    const url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return { origin: url.origin, hostname: url.hostname };
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a URL
    return undefined;
  }
}

/**
 * The policy's check, with the configured origins normalized once: a server checks every request it gets
 * (a browser sends an Origin on each), so only the request's own Origin is parsed then, once.
 */
export function originCheck(policy: OriginPolicy = {}): (origin: string | null | undefined) => boolean {
  const allowed = policy.allowedOrigins ?? [];
  const any = allowed.includes('*');
  const exact = new Set(allowed.map((entry) => parseOrigin(entry)?.origin).filter((entry): entry is string => entry !== undefined));
  const loopback = policy.allowLoopbackOrigins ?? true;
  return (origin) => {
    if (origin === null || origin === undefined || any) return true;
    const parsed = parseOrigin(origin.trim());
    if (parsed === undefined) return false;
    return (loopback && isLoopbackHost(parsed.hostname)) || exact.has(parsed.origin);
  };
}

export function isOriginAllowed(origin: string | null | undefined, policy: OriginPolicy = {}): boolean {
  return originCheck(policy)(origin);
}
