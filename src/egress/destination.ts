/**
 * Turning a URL into a checked destination: the host's addresses resolved once, every one of them checked
 * against the forbidden ranges (one forbidden address refuses the whole host: a name that resolves to both
 * a public and a private address is exactly what a rebinding attack looks like), and kept so the connection
 * goes to those addresses and no others (see fetch.ts: no second resolution, no rebinding window).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIPv4, isIPv6 } from 'node:net';
import { DEFAULT_HTTPS_PORT, canonicalHost } from './allowlist.js';
import { EgressError } from './errors.js';
import { isForbiddenAddress } from './forbidden-address.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all of its addresses. Injected so tests can map names without touching DNS. */
export type HostLookup = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemLookup: HostLookup = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export interface CheckedDestination {
  /** The URL of this hop. */
  url: URL;
  /** The name (or bare IP) used for SNI, certificate checks and the Host header. */
  hostname: string;
  port: number;
  /** The addresses the connection may use, already checked. */
  addresses: ResolvedAddress[];
}

export interface DestinationPolicy {
  lookup: HostLookup;
  privateDestinations: 'deny' | 'allow';
  /** The range check; isForbiddenAddress unless a test narrows it. */
  isForbidden: (ip: string) => boolean;
}

function bareHost(url: URL): string {
  const host = canonicalHost(url.hostname) ?? url.hostname;
  return host.startsWith('[') ? host.slice(1, -1) : host;
}

/** Resolves and checks the destination of one hop. Throws EgressError (forbidden_destination, connection). */
export async function resolveDestination(
  url: URL,
  policy: DestinationPolicy,
  signal: AbortSignal,
): Promise<CheckedDestination> {
  const hostname = bareHost(url);
  const port = url.port === '' ? DEFAULT_HTTPS_PORT : Number(url.port);
  let addresses: ResolvedAddress[];
  if (isIPv4(hostname)) addresses = [{ address: hostname, family: 4 }];
  else if (isIPv6(hostname)) addresses = [{ address: hostname, family: 6 }];
  else {
    try {
      addresses = await abortable(policy.lookup(hostname), signal);
    } catch (error) {
      if (signal.aborted) throw error;
      throw new EgressError('connection', `cannot resolve ${hostname}`);
    }
    if (addresses.length === 0) throw new EgressError('connection', `${hostname} has no addresses`);
  }
  if (policy.privateDestinations !== 'allow' && addresses.some((a) => policy.isForbidden(a.address))) {
    throw new EgressError(
      'forbidden_destination',
      `${hostname} is or resolves to a private or reserved address, which functions may not reach`,
    );
  }
  return { url, hostname, port, addresses };
}

/** Settles with `promise`, or rejects as soon as `signal` aborts (the lookup itself cannot be cancelled). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
