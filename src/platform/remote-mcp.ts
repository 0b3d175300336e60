/**
 * What the platform needs to use a remote MCP server, given the URL and the headers a vault credential supplies:
 * its tools as a Toolbox, and its resources, resource templates and prompts as a Catalog. The real
 * implementation is mcp/'s client; the platform sees only this.
 */
import type { Catalog, ListenFilter, ListingChange, UpstreamListen } from '../mcp/index.js';
import type { Toolbox } from '../tool.js';

export interface RemoteMcp {
  tools(url: string, headers: Record<string, string>): Promise<Toolbox>;
  catalog(url: string, headers: Record<string, string>): Promise<Catalog>;
  /**
   * A `subscriptions/listen` stream to the server, its changes handed to `onChange` in the server's own names;
   * undefined when the server has no listen (a 2025-era one). Absent: the platform hears no upstream's changes.
   */
  listen?(url: string, headers: Record<string, string>, filter: ListenFilter, onChange: (change: ListingChange) => void): Promise<UpstreamListen | undefined>;
}
