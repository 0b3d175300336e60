/**
 * `subscriptions/listen` through a session (MCP 2026-07-28), per session and per replica: the session's change feed
 * (mcp/change-feed.ts) that its endpoint's listen streams hear, the limits on those streams, and where the changes
 * come from —
 *
 * - its remote servers' own changes, heard on listen streams to them while the session's clients listen
 *   (session-changes.ts), renamed as the session names things; a list change also drops the session's cached toolbox,
 *   so that the next request lists what changed;
 * - its own list changes: a rebuilt toolbox whose tools differ from the last one this replica served (a refresh
 *   found a server's tools changed without saying so, an accepted pin);
 * - another replica's (nats-listings.ts), which the relay hands to `deliverRelayed`.
 *
 * Publishing a new agent version announces nothing to existing sessions: a session keeps the agent version it was
 * made with (its tools, resources and prompts are that version's), so nothing it serves changed; a client that wants
 * the new version opens a new session.
 *
 * Limits, per session on this replica: at most 8 listen streams open at once (a 9th is refused, -32000, saying how
 * many are open and that closing one makes room), and at most 64 resource URIs per stream (-32602, saying how many
 * were given). A stream hears at most one list change of each kind per second (the endpoint paces each stream:
 * LIST_CHANGED_PACE_MS), so a server that flaps cannot flood a client.
 */
import { ChangeFeed, type ListenAdmission, type ListenFilter, type ListenGate, type ListingChange } from '../mcp/index.js';
import type { AgentToolbox } from './calls/index.js';
import { SessionUpstreamWatch } from './session-changes.js';

export const MAX_LISTEN_STREAMS_PER_SESSION = 8;
export const MAX_LISTEN_URIS_PER_STREAM = 64;
/** At most one list change of each kind per this long on each stream. */
export const LIST_CHANGED_PACE_MS = 1000;
/** How long a stream's acknowledgement waits for the session's streams to its servers to open (then it goes anyway). */
const UPSTREAM_OPEN_WAIT_MS = 5_000;
/** JSON-RPC's server-error code for a request refused for the moment (the stream limit). */
const REFUSED_FOR_NOW = -32000;
const INVALID_PARAMS = -32602;

/** Where a change came from: a remote server's own notification, or the session's own listing. */
export type ChangeOrigin = 'upstream' | 'session';

export type ChangeObserver = (sessionId: string, change: ListingChange, from: ChangeOrigin) => void;

export interface SessionListensOptions {
  /** Drops the session's cached toolbox (a list of it changed). */
  evict: (sessionId: string) => void;
  report?: (error: Error) => void;
  maxStreams?: number;
  maxUris?: number;
}

interface SessionState {
  feed: ChangeFeed;
  /** Open streams, each with the session URIs it named. */
  streams: Map<number, readonly string[]>;
  box?: AgentToolbox;
  watch?: SessionUpstreamWatch;
  /** The signature of the tools this replica last served the session. */
  toolsSignature?: string;
  /** A tools change was announced since that signature was taken (the rebuild that follows is not another). */
  toolsAnnounced: boolean;
}

export class SessionListens {
  private readonly sessions = new Map<string, SessionState>();
  private readonly observers = new Set<ChangeObserver>();
  private readonly report: (error: Error) => void;
  private readonly maxStreams: number;
  private readonly maxUris: number;
  private nextStream = 1;
  /** Aborted when the replica shuts down: every listen stream ends (none ends on its own). */
  private readonly ending = new AbortController();

  constructor(private readonly options: SessionListensOptions) {
    this.report = options.report ?? (() => undefined);
    this.maxStreams = options.maxStreams ?? MAX_LISTEN_STREAMS_PER_SESSION;
    this.maxUris = options.maxUris ?? MAX_LISTEN_URIS_PER_STREAM;
  }

  private state(sessionId: string): SessionState {
    let state = this.sessions.get(sessionId);
    if (!state) {
      state = { feed: new ChangeFeed(this.report), streams: new Map(), toolsAnnounced: false };
      this.sessions.set(sessionId, state);
    }
    return state;
  }

  /**
   * The session's feed, the gate of its listen streams and their pace, for an endpoint serving `box` (the latest
   * toolbox): a box whose tools list otherwise than the last one served is the session's own tools change.
   */
  forSession(sessionId: string, box: AgentToolbox): { feed: ChangeFeed; gate: ListenGate; paceMs: number } {
    const state = this.state(sessionId);
    if (state.box !== box) this.toolsServed(sessionId, toolsSignature(box));
    state.box = box;
    return { feed: state.feed, gate: { admit: (filter) => this.admit(sessionId, state, filter) }, paceMs: LIST_CHANGED_PACE_MS };
  }

  /** Hears every change this replica saw itself (the relay publishes them to the others). */
  observe(observer: ChangeObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** Open listen streams of a session on this replica. */
  openStreams(sessionId: string): number {
    return this.sessions.get(sessionId)?.streams.size ?? 0;
  }

  /** Admitted once the session hears its servers (within a bound): a change right after the acknowledgement is not missed. */
  private async admit(sessionId: string, state: SessionState, filter: ListenFilter): Promise<ListenAdmission> {
    if (this.ending.signal.aborted) return { refused: { code: REFUSED_FOR_NOW, message: 'this server is shutting down; listen through another replica, or again once it is back' } };
    const uris = filter.resourceSubscriptions ?? [];
    if (!Array.isArray(uris) || uris.length > this.maxUris) {
      const given = Array.isArray(uris) ? uris.length : 0;
      return { refused: { code: INVALID_PARAMS, message: `a listen stream may name at most ${this.maxUris} resource URIs in resourceSubscriptions; this one named ${given} (open several streams, or name fewer)`, data: { limit: this.maxUris, given } } };
    }
    if (state.streams.size >= this.maxStreams) {
      return { refused: { code: REFUSED_FOR_NOW, message: `this session has ${state.streams.size} listen streams open on this server, the most it may have (${this.maxStreams}); close one to open another`, data: { limit: this.maxStreams, open: state.streams.size } } };
    }
    const id = this.nextStream++;
    state.streams.set(id, uris.filter((u): u is string => typeof u === 'string'));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.rewatch(sessionId, state), new Promise<void>((resolve) => { timer = setTimeout(resolve, UPSTREAM_OPEN_WAIT_MS); })]);
    clearTimeout(timer);
    let released = false;
    return {
      ends: this.ending.signal,
      release: () => {
        if (released) return;
        released = true;
        state.streams.delete(id);
        void this.rewatch(sessionId, state);
      },
    };
  }

  /** Keeps the session's streams to its servers as its listeners need them: none when none listens. */
  private async rewatch(sessionId: string, state: SessionState): Promise<void> {
    if (state.streams.size === 0) {
      const watch = state.watch;
      state.watch = undefined;
      await watch?.close();
      return;
    }
    const box = state.box;
    if (box === undefined || box.changeSources.length === 0) return;
    state.watch ??= new SessionUpstreamWatch(box.changeSources, box.resourceNaming, (_server, change) => this.upstreamChanged(sessionId, change), this.report);
    await state.watch.update(new Set([...state.streams.values()].flat()));
  }

  private upstreamChanged(sessionId: string, change: ListingChange): void {
    const state = this.sessions.get(sessionId);
    if (!state) return;
    if (change.kind !== 'resource') {
      this.options.evict(sessionId);
      if (change.kind === 'tools') state.toolsAnnounced = true;
    }
    state.feed.publish(change);
    this.tell(sessionId, change, 'upstream');
  }

  /**
   * The tools this replica now serves the session, as a signature: one that differs from the last (and was not
   * announced already, as a server's own change) is the session's own tools change, announced.
   */
  toolsServed(sessionId: string, signature: string): void {
    const state = this.state(sessionId);
    const before = state.toolsSignature;
    state.toolsSignature = signature;
    const announced = state.toolsAnnounced;
    state.toolsAnnounced = false;
    if (before === undefined || before === signature || announced) return;
    state.feed.toolsChanged();
    this.tell(sessionId, { kind: 'tools' }, 'session');
  }

  /**
   * Another replica's change. A list change drops this replica's cached toolbox too. It reaches this replica's
   * listeners unless it is a server's own and this replica hears that server itself (it has it already).
   */
  deliverRelayed(sessionId: string, change: ListingChange, from: ChangeOrigin): void {
    if (change.kind !== 'resource') this.options.evict(sessionId);
    const state = this.sessions.get(sessionId);
    if (!state) return;
    // The rebuild this change causes here is not a change of this replica's own to announce again.
    if (change.kind === 'tools') state.toolsAnnounced = true;
    if (state.streams.size === 0 || (from === 'upstream' && state.watch?.active)) return;
    state.feed.publish(change);
  }

  private tell(sessionId: string, change: ListingChange, from: ChangeOrigin): void {
    for (const observer of [...this.observers]) {
      try {
        observer(sessionId, change, from);
      } catch (err) {
        this.report(err instanceof Error ? err : new Error(String(err)));
      }
    }
  }

  /** The replica is shutting down: every listen stream ends now, so that none holds the shutdown to its grace. */
  endAll(): void {
    this.ending.abort();
  }

  /** The session is gone: its streams to servers close (its clients' streams close with its endpoint). */
  drop(sessionId: string): void {
    const state = this.sessions.get(sessionId);
    this.sessions.delete(sessionId);
    void state?.watch?.close();
  }

  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    this.observers.clear();
    await Promise.all(all.map((s) => s.watch?.close()));
  }
}

/** What a listing of a toolbox's tools shows, as one string: two toolboxes that list alike have the same. */
export function toolsSignature(box: AgentToolbox): string {
  const names = box.listed ?? Object.keys(box.tools);
  return JSON.stringify(names.map((name) => {
    const tool = box.tools[name];
    return tool ? [name, tool.title ?? null, tool.description ?? null, tool.inputSchema, tool.outputSchema ?? null, tool.annotations ?? null] : [name];
  }));
}
