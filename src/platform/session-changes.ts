/**
 * A session's remote servers' changes, as the session names things. A server's list change is the session's list
 * change of the same kind (the session's tools, prompts and resources are its servers' under the naming rules:
 * any change of one is a change of the session's list), and a server's resource update names the resource as the
 * session serves it (resource-uris.ts: prefixed `subako-mcp://<server>/…`, or verbatim with one server). The other
 * way, a listening client's URIs go to each server as that server's own.
 *
 * SessionUpstreamWatch keeps one listen stream per remote server while the session's clients listen, each asking its
 * server for every list change (the session must rebuild on any, whatever one client asked) and for the resources
 * the session's listeners named; a stream whose filter changes is opened anew before the old one is closed, so no
 * change falls between.
 */
import type { ListenFilter, ListingChange, UpstreamListen } from '../mcp/index.js';
import type { ChangeSource, ResourceNaming } from './calls/index.js';

/** A server's change as the session announces it. */
export function sessionChangeOf(server: string, change: ListingChange, naming: ResourceNaming): ListingChange {
  return change.kind === 'resource' ? { kind: 'resource', uri: naming.served(server, change.uri) } : change;
}

/** What to ask each server for, given the session URIs its listening clients named (unknown URIs go to no server). */
export function upstreamFilters(servers: readonly string[], sessionUris: Iterable<string>, naming: ResourceNaming): Map<string, ListenFilter> {
  const uris = new Map<string, Set<string>>(servers.map((s) => [s, new Set<string>()]));
  for (const uri of sessionUris) {
    const named = naming.parse(uri);
    if (named !== undefined) uris.get(named.server)?.add(named.uri);
  }
  const filters = new Map<string, ListenFilter>();
  for (const [server, own] of uris) {
    filters.set(server, {
      toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true,
      ...(own.size > 0 ? { resourceSubscriptions: [...own].sort() } : {}),
    });
  }
  return filters;
}

function sameFilter(a: ListenFilter | undefined, b: ListenFilter): boolean {
  return a !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

interface Watched {
  filter: ListenFilter;
  listen: Promise<UpstreamListen | undefined>;
}

/** The listen streams a session keeps to its remote servers while its clients listen. */
export class SessionUpstreamWatch {
  private readonly watched = new Map<string, Watched>();
  private closed = false;

  constructor(
    private readonly sources: readonly ChangeSource[],
    private readonly naming: ResourceNaming,
    /** Hears each server's change, in the session's names. */
    private readonly onChange: (server: string, change: ListingChange) => void,
    private readonly report: (error: Error) => void,
  ) {}

  /** Whether a stream to some server is open or opening. */
  get active(): boolean {
    return this.watched.size > 0;
  }

  /**
   * Opens (or reopens) each server's stream for the session URIs its listeners named now; resolves once the streams
   * it opened are up (or failed: reported).
   */
  update(sessionUris: Iterable<string>): Promise<void> {
    if (this.closed) return Promise.resolve();
    const opening: Promise<unknown>[] = [];
    const filters = upstreamFilters(this.sources.map((s) => s.server), sessionUris, this.naming);
    for (const source of this.sources) {
      const filter = filters.get(source.server)!;
      const current = this.watched.get(source.server);
      if (sameFilter(current?.filter, filter)) continue;
      const onChange = (change: ListingChange) => this.onChange(source.server, sessionChangeOf(source.server, change, this.naming));
      const listen = source.listen(filter, onChange).catch((err: unknown) => {
        this.report(new Error(`the session cannot hear the changes of remote MCP server ${source.server}: ${err instanceof Error ? err.message : String(err)}`));
        return undefined;
      });
      this.watched.set(source.server, { filter, listen });
      opening.push(listen);
      // The old stream closes once the new one is up (or failed): a change meanwhile reaches one of them.
      if (current) void listen.then(() => current.listen).then((old) => old?.close());
      void listen.then((opened) => {
        if (opened === undefined && this.watched.get(source.server)?.listen === listen) this.watched.delete(source.server);
        // A stream the server ended is forgotten: the next update opens it again.
        void opened?.closed.then(() => {
          if (this.watched.get(source.server)?.listen === listen) this.watched.delete(source.server);
        });
        if (this.closed) void opened?.close();
      });
    }
    return Promise.all(opening).then(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.watched.values()];
    this.watched.clear();
    await Promise.all(all.map(async (w) => (await w.listen)?.close()));
  }
}
