/**
 * What a served toolbox announces on `subscriptions/listen` (MCP 2026-07-28): its tools, prompts or resources list
 * changed, or one resource (by URI) was updated. A ChangeFeed is where a host publishes those; every open listen
 * stream of an endpoint served with `changes: feed` hears them, each only what its client asked for (the SDK's
 * listen router filters by the stream's acknowledged subset). A feed knows nothing of HTTP or of streams: one feed
 * may serve many endpoints (a session's handler and the one that replaces it on a rebuild), and a listener that
 * throws does not keep the change from the others.
 *
 * A listener may be paced (`pacedListener`): at most one list change of each kind per window, a change that comes
 * sooner delivered once at the end of the window (coalesced, never dropped: a list change means "read the list
 * again", so one after the last is enough). Resource updates are never paced — each names its own URI.
 */

/** One change: a list of tools, prompts or resources changed, or the resource at `uri` was updated. */
export type ListingChange =
  | { kind: 'tools' }
  | { kind: 'prompts' }
  | { kind: 'resources' }
  | { kind: 'resource'; uri: string };

export type ListingListener = (change: ListingChange) => void;

/** The notification methods of the revision, by kind of change. */
export const CHANGE_METHODS = {
  tools: 'notifications/tools/list_changed',
  prompts: 'notifications/prompts/list_changed',
  resources: 'notifications/resources/list_changed',
  resource: 'notifications/resources/updated',
} as const;

export class ChangeFeed {
  readonly #listeners = new Set<ListingListener>();
  readonly #onError: (error: Error) => void;

  /** `onError` hears a listener that threw (the change still reaches the others). */
  constructor(onError?: (error: Error) => void) {
    this.#onError = onError ?? (() => undefined);
  }

  /** Hears every change from now on; the returned function stops it (idempotent). */
  subscribe(listener: ListingListener): () => void {
    // A wrapper per subscription: the same function subscribed twice is two listeners, each unsubscribed on its own.
    const own: ListingListener = (change) => listener(change);
    this.#listeners.add(own);
    return () => {
      this.#listeners.delete(own);
    };
  }

  /** The number of listeners now (open listen streams, for a feed served by one endpoint). */
  get listeners(): number {
    return this.#listeners.size;
  }

  publish(change: ListingChange): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(change);
      } catch (err) {
        this.#onError(err instanceof Error ? err : new Error(String(err)));
      }
    }
  }

  toolsChanged(): void {
    this.publish({ kind: 'tools' });
  }

  promptsChanged(): void {
    this.publish({ kind: 'prompts' });
  }

  resourcesChanged(): void {
    this.publish({ kind: 'resources' });
  }

  resourceUpdated(uri: string): void {
    this.publish({ kind: 'resource', uri });
  }
}

/** The change a notification of the revision announces; undefined for any other (or a resources/updated without a URI). */
export function changeOfNotification(method: string, params: unknown): ListingChange | undefined {
  switch (method) {
    case CHANGE_METHODS.tools: return { kind: 'tools' };
    case CHANGE_METHODS.prompts: return { kind: 'prompts' };
    case CHANGE_METHODS.resources: return { kind: 'resources' };
    case CHANGE_METHODS.resource: {
      const uri = (params as { uri?: unknown } | undefined)?.uri;
      return typeof uri === 'string' ? { kind: 'resource', uri } : undefined;
    }
    default: return undefined;
  }
}

/** Whether a value read off the wire (another replica's message) is a change. */
export function isListingChange(value: unknown): value is ListingChange {
  const change = value as { kind?: unknown; uri?: unknown } | null;
  if (typeof change !== 'object' || change === null) return false;
  if (change.kind === 'resource') return typeof change.uri === 'string' && change.uri.length > 0 && change.uri.length <= 4096;
  return change.kind === 'tools' || change.kind === 'prompts' || change.kind === 'resources';
}

/**
 * `listener` paced: at most one list change of each kind per `windowMs`; one that comes sooner is delivered once at
 * the window's end (several coalesced into that one). `stop()` cancels what is waiting.
 */
export function pacedListener(listener: ListingListener, windowMs: number, now: () => number = Date.now): { listener: ListingListener; stop(): void } {
  const lastSent = new Map<string, number>();
  const waiting = new Map<string, NodeJS.Timeout>();
  let stopped = false;
  const send = (change: ListingChange) => {
    lastSent.set(change.kind, now());
    listener(change);
  };
  return {
    listener: (change) => {
      if (stopped) return;
      if (change.kind === 'resource' || windowMs <= 0) return listener(change);
      if (waiting.has(change.kind)) return; // one is due at the window's end already: it covers this one
      const since = now() - (lastSent.get(change.kind) ?? Number.NEGATIVE_INFINITY);
      if (since >= windowMs) return send(change);
      const timer = setTimeout(() => {
        waiting.delete(change.kind);
        if (!stopped) send(change);
      }, windowMs - since);
      timer.unref?.();
      waiting.set(change.kind, timer);
    },
    stop: () => {
      stopped = true;
      for (const timer of waiting.values()) clearTimeout(timer);
      waiting.clear();
    },
  };
}
