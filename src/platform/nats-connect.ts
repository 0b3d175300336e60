/**
 * The one way replicas and workers connect to NATS: named, reconnecting for ever once connected (calls made
 * while it is away fail as `unavailable`, and succeed again when it is back, nothing restarted), and a first
 * connection that fails is one line saying where it looked and what to do.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { UpstreamError } from './errors.js';

export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  try {
    return await connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new UpstreamError(`cannot reach the NATS server at ${url} (${why}); start it with JetStream (nats-server -js), or check --nats`, 'nats.unreachable', { cause: err });
  }
}
