/**
 * A `subscriptions/listen` stream to a remote MCP server (2026-07-28), on a connection of its own: the SDK's client
 * dispatches a stream's notifications to its connection-wide handlers, so sharing the pool's connection with tools'
 * calls would mix them up, and a stream is long-lived where calls are short. The server's change notifications are
 * handed on as ListingChanges; what the caller does with them (rename, relay) is its business.
 *
 * A 2025-era server has no listen (its changes come unsolicited on a stream subako does not keep): `undefined`, and
 * the caller learns of its changes when it next lists.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/client';
import { BoundedTransport } from './bounded-transport.js';
import { SUBAKO_VERSION } from '../version.js';
import type { Secret } from '../common/index.js';
import { CHANGE_METHODS, changeOfNotification, type ListingChange } from './change-feed.js';
import { transportAuth, type Descriptor } from './connection.js';
import type { ListenFilter } from './listen-bus.js';

/**
 * The most read of one message on a listen stream: a change notification is small, and a server that sends more on a
 * stream that lives as long as a client listens fails the stream (the session then learns of changes when it lists).
 */
export const MAX_LISTEN_MESSAGE_BYTES = 64 * 1024;

export interface UpstreamListen {
  /** What the server agreed to send. */
  readonly honored: ListenFilter;
  /** Resolves when the stream ends, whichever side ended it. */
  readonly closed: Promise<unknown>;
  close(): Promise<void>;
}

export interface UpstreamListenOptions {
  descriptor: Descriptor;
  filter: ListenFilter;
  onChange: (change: ListingChange) => void;
  /** For connecting and for the server's acknowledgement (default 30 s). */
  timeoutMs?: number;
}

/** Opens the stream; undefined when the server does not speak 2026-07-28 (no listen there). */
export async function listenUpstream(options: UpstreamListenOptions): Promise<UpstreamListen | undefined> {
  const secrets = new Set<Secret>();
  const client = new Client({ name: 'subako', version: SUBAKO_VERSION }, { versionNegotiation: { mode: 'auto' } });
  for (const method of Object.values(CHANGE_METHODS)) {
    client.setNotificationHandler(method, (notification) => {
      const change = changeOfNotification(notification.method, notification.params);
      if (change !== undefined) options.onChange(change);
    });
  }
  const timeout = options.timeoutMs ?? 30_000;
  try {
    const transport = new BoundedTransport(new URL(options.descriptor.url), transportAuth(options.descriptor.auth, secrets), randomUUID(), MAX_LISTEN_MESSAGE_BYTES);
    await client.connect(transport, { timeout });
    if (client.getProtocolEra() !== 'modern') {
      await client.close();
      return undefined;
    }
    const sub = await client.listen(options.filter as never, { timeout });
    const closed = sub.closed.finally(() => client.close().catch(() => undefined));
    return {
      honored: sub.honoredFilter as ListenFilter,
      closed,
      close: async () => {
        await sub.close().catch(() => undefined);
        await client.close().catch(() => undefined);
      },
    };
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err;
  }
}
