/**
 * What the platform needs to use a remote MCP server: its tools as a Toolbox, given the URL and the headers
 * a vault credential supplies. The real implementation is mcp/'s client toolbox; the platform sees only this.
 */
import type { Toolbox } from '../tool.js';

export interface RemoteMcp {
  tools(url: string, headers: Record<string, string>): Promise<Toolbox>;
}
