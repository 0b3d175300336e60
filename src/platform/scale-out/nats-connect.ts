/**
 * The one way replicas and workers connect to NATS: named, reconnecting for ever once connected (calls made
 * while it is away fail as `unavailable`, and succeed again when it is back, nothing restarted), and a first
 * connection that fails is one line saying where it looked and what to do.
 *
 * Credentials ride in the URL as NATS's own tools write them — `nats://user:password@host` or
 * `nats://token@host` — and are handed to the client as its options (it does not read them from a URL); the
 * server it connects to is the URL without them.
 */
import { connect, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import { UpstreamError } from '../errors.js';

/** The connection options a URL names: the server, and its user and password, or token, when it holds them. */
export function natsConnectionOptions(url: string): Pick<ConnectionOptions, 'servers' | 'user' | 'pass' | 'token'> {
  if (!URL.canParse(url)) return { servers: url };
  const parsed = new URL(url);
  if (parsed.username === '' && parsed.password === '') return { servers: url };
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  parsed.username = '';
  parsed.password = '';
  const servers = parsed.toString().replace(/\/$/, '');
  return pass === '' ? { servers, token: user } : { servers, user, pass };
}

export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  try {
    return await connect({ ...natsConnectionOptions(url), name, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
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
