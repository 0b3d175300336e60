/**
 * A ChangeFeed as the SDK's listen router hears it (its `ServerEventBus`): `createMcpHandler` serves each
 * `subscriptions/listen` stream itself — acknowledgement, filtering by what the client asked, the subscription id
 * stamped on each notification, keep-alives — and subscribes once per open stream. So each subscription here is
 * one stream, and is paced on its own when a window is given (change-feed.ts: at most one list change per kind).
 *
 * A ListenGate, when an endpoint has one, decides first whether a listen stream may open at all (a session's
 * limits: platform/session-listens.ts) and hears when it ends.
 */
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import { pacedListener, type ChangeFeed, type ListingChange } from './change-feed.js';

/** What a client asked a listen stream for (the revision's SubscriptionFilter). */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

/** A refusal of a listen stream, as the JSON-RPC error its client reads. */
export interface ListenRefusal {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/** An admitted stream: `release` when it ends; when `ends` aborts (the host is shutting down) the stream is ended. */
export type ListenAdmission = { release(): void; ends?: AbortSignal } | { refused: ListenRefusal };

export interface ListenGate {
  /**
   * Admits a stream (`release` when it ends, whichever way) or refuses it, saying why and what would be accepted. The
   * stream is acknowledged once this settles: a host may first start hearing what the stream will carry.
   */
  admit(filter: ListenFilter): ListenAdmission | Promise<ListenAdmission>;
}

function eventOf(change: ListingChange): ServerEvent {
  switch (change.kind) {
    case 'tools': return { kind: 'tools_list_changed' };
    case 'prompts': return { kind: 'prompts_list_changed' };
    case 'resources': return { kind: 'resources_list_changed' };
    case 'resource': return { kind: 'resource_updated', uri: change.uri };
  }
}

function changeOf(event: ServerEvent): ListingChange {
  switch (event.kind) {
    case 'tools_list_changed': return { kind: 'tools' };
    case 'prompts_list_changed': return { kind: 'prompts' };
    case 'resources_list_changed': return { kind: 'resources' };
    case 'resource_updated': return { kind: 'resource', uri: event.uri };
  }
}

/** The feed as the SDK's bus; each stream's listener paced over `paceMs` (none when 0). */
export function feedBus(feed: ChangeFeed, paceMs: number): ServerEventBus {
  return {
    publish: (event) => feed.publish(changeOf(event)),
    subscribe: (listener) => {
      const paced = pacedListener((change) => listener(eventOf(change)), paceMs);
      const unsubscribe = feed.subscribe(paced.listener);
      return () => {
        paced.stop();
        unsubscribe();
      };
    },
  };
}

/** The listen request in a parsed body (a single message), or undefined. */
export function listenRequestOf(body: unknown): { id: string | number; filter: ListenFilter } | undefined {
  const message = body as { method?: unknown; id?: unknown; params?: { notifications?: unknown } } | null;
  if (typeof message !== 'object' || message === null || Array.isArray(message) || message.method !== 'subscriptions/listen') return undefined;
  if (typeof message.id !== 'string' && typeof message.id !== 'number') return undefined;
  const filter = message.params?.notifications;
  return { id: message.id, filter: typeof filter === 'object' && filter !== null ? (filter as ListenFilter) : {} };
}

/** `response` whose body, once it ends or is cancelled, calls `done` (once); ended by the server when `ends` aborts. */
export function onResponseEnd(response: Response, done: () => void, ends?: AbortSignal): Response {
  let called = false;
  const once = () => {
    if (!called) {
      called = true;
      done();
    }
  };
  if (response.body === null) {
    once();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (ends === undefined) return;
      const end = () => {
        once();
        void reader.cancel().catch(() => undefined); // the SDK's stream unsubscribes from the feed
        try {
          controller.close();
        } catch {
          // closed already
        }
      };
      if (ends.aborted) end();
      else ends.addEventListener('abort', end, { once: true });
    },
    async pull(controller) {
      try {
        const { done: ended, value } = await reader.read();
        if (ended) {
          once();
          controller.close();
          return;
        }
        controller.enqueue(value);
      } catch (err) {
        once();
        controller.error(err);
      }
    },
    cancel(reason) {
      once();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
