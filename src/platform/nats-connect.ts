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
    throw new UpstreamError(`cannot reach the NATS server at ${withoutCredentials(url)} (${why}); start it with JetStream (nats-server -js), or check --nats`, 'nats.unreachable', { cause: err });
  }
}

/** The URL as it may be shown: a user and password in it are left out (the message reaches logs). */
function withoutCredentials(url: string): string {
  if (!URL.canParse(url)) return 'the URL given';
  const parsed = new URL(url);
  if (parsed.username === '' && parsed.password === '') return url;
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}
