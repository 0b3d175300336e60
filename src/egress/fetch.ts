/**
 * The one function that touches the network: one HTTP exchange with a resolved, checked destination.
 * The connection is pinned: undici's connector is given a `lookup` that answers with the addresses already
 * checked (no second DNS resolution, so no rebinding window), while SNI, certificate verification and the
 * Host header use the original name.
 */
import type { LookupAddress } from 'node:dns';
import type { Readable } from 'node:stream';
import type { SecureContext } from 'node:tls';
import { Client } from 'undici';
import type { CheckedDestination, ResolvedAddress } from './destination.js';

export interface OutgoingExchange {
  method: string;
  /** Path and query of the hop's URL. */
  path: string;
  headers: Record<string, string>;
  /** Bytes, or a stream whose length is in the `content-length` header. */
  body?: Uint8Array | Readable;
}

export interface IncomingResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
  /** Tears the connection down; safe to call more than once. */
  dispose(): void;
}

export interface TlsTrust {
  /**
   * A context holding the certificates to trust, replacing Node's defaults (which include
   * NODE_EXTRA_CA_CERTS) when given. Built once: parsing a root store per connection costs ~100 ms.
   */
  secureContext?: SecureContext;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A net.connect `lookup` that never consults DNS: it answers with the checked addresses only. */
export function pinnedLookup(addresses: readonly ResolvedAddress[]) {
  return (_hostname: string, options: { all?: boolean } | number, callback: LookupCallback): void => {
    const all = typeof options === 'object' && options !== null && options.all === true;
    if (all) callback(null, addresses.map((a) => ({ address: a.address, family: a.family })));
    else callback(null, addresses[0].address, addresses[0].family);
  };
}

/**
 * Sends one request to `destination` and resolves once the response headers are in. The caller reads
 * `body` and must call `dispose()` when done; aborting `signal` destroys the exchange.
 */
export async function sendToDestination(
  destination: CheckedDestination,
  exchange: OutgoingExchange,
  trust: TlsTrust,
  signal: AbortSignal,
): Promise<IncomingResponse> {
  const host = destination.hostname.includes(':') ? `[${destination.hostname}]` : destination.hostname;
  const client = new Client(`https://${host}:${destination.port}`, {
    connect: {
      lookup: pinnedLookup(destination.addresses) as never,
      ...(trust.secureContext !== undefined ? { secureContext: trust.secureContext } : {}),
      rejectUnauthorized: true,
    },
    // The overall deadline is the abort signal; undici's own idle timers stay as a backstop.
    pipelining: 1,
  });
  let disposed = false;
  const dispose = (): void => {
    if (disposed) return;
    disposed = true;
    client.destroy().catch(() => {});
  };
  try {
    const response = await client.request({
      method: exchange.method as never,
      path: exchange.path,
      headers: exchange.headers,
      body: exchange.body as never,
      signal,
    });
    // Readers see errors through iteration; this listener only keeps an error on a body that nobody is
    // reading (a redirect discarded, a teardown) from becoming an uncaught exception in the host.
    response.body.on('error', () => {});
    return { status: response.statusCode, headers: response.headers, body: response.body, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}
