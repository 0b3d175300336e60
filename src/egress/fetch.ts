/**
 * The one function that touches the network: one HTTP exchange with a resolved, checked destination, over a
 * connection from the pool (connection-pool.ts) that is pinned to the checked addresses: undici's connector
 * answers its `lookup` with them (no second DNS resolution, so no rebinding window), while SNI, certificate
 * verification and the Host header use the original name.
 */
import type { Readable } from 'node:stream';
import type { HttpsConnectionPool } from './connection-pool.js';
import type { CheckedDestination } from './destination.js';
import type { TlsTrust } from './trust.js';

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
  /**
   * Gives the connection back: kept for reuse when the body was read to its end, closed otherwise (a body
   * left unread would desynchronise the next exchange). Safe to call more than once.
   */
  dispose(): void;
}

/** How the connection for an exchange is chosen: where, trusting what, on whose authority. */
export interface ConnectionChoice {
  pool: HttpsConnectionPool;
  trust: TlsTrust;
  /** authorityPartition() of the exchange's headers. */
  partition: string;
}

/**
 * Sends one request to `destination` and resolves once the response headers are in. The caller reads
 * `body` and must call `dispose()` when done; aborting `signal` destroys the exchange.
 */
export async function sendToDestination(
  destination: CheckedDestination,
  exchange: OutgoingExchange,
  choice: ConnectionChoice,
  signal: AbortSignal,
): Promise<IncomingResponse> {
  const lease = choice.pool.acquire({
    hostname: destination.hostname,
    port: destination.port,
    addresses: destination.addresses,
    trust: choice.trust,
    partition: choice.partition,
  });
  try {
    const response = await lease.client.request({
      method: exchange.method as never,
      path: exchange.path,
      headers: exchange.headers,
      body: exchange.body as never,
      signal,
    });
    // Readers see errors through iteration; this listener only keeps an error on a body that nobody is
    // reading (a redirect discarded, a teardown) from becoming an uncaught exception in the host.
    response.body.on('error', () => {});
    const body = response.body;
    const dispose = (): void => {
      const complete = body.readableEnded && !body.errored && !signal.aborted;
      if (!complete) body.destroy();
      lease.release(complete);
    };
    return { status: response.statusCode, headers: response.headers, body, dispose };
  } catch (error) {
    lease.release(false);
    throw error;
  }
}
