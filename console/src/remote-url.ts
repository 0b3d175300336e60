// A remote MCP server's URL may be a capability URL (a token in its path or query is the credential), so the
// console shows only its origin: `https://mcp.example.com/…` when anything follows the origin. A spec edited in
// the console carries that shown form; `restoreUrls` puts the stored URL back for a server whose URL was left as shown.
import type { AgentInput } from './api';

/** The URL as shown: its origin, and `/…` when it has a path, query, fragment or user part that is left out. */
export function shownRemoteUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const bare = (parsed.pathname === '/' || parsed.pathname === '') && !parsed.search && !parsed.hash && !parsed.username && !parsed.password;
    return bare ? parsed.origin : `${parsed.origin}/…`;
  } catch {
    return '(not a URL)';
  }
}

type Servers = NonNullable<AgentInput['mcp_servers']>;

/** The servers with each URL as shown. */
export function maskUrls<T extends { url: string }>(servers: readonly T[]): T[] {
  return servers.map((s) => ({ ...s, url: shownRemoteUrl(s.url) }));
}

/**
 * The servers with the stored URL back where the URL is still the shown form of the stored server of the same
 * name (a server renamed, or given another URL, keeps what was typed).
 */
export function restoreUrls(servers: Servers | undefined, stored: readonly { name: string; url: string }[]): Servers | undefined {
  if (!servers) return servers;
  const byName = new Map(stored.map((s) => [s.name, s.url]));
  return servers.map((s) => {
    const url = byName.get(s.name);
    return url !== undefined && s.url === shownRemoteUrl(url) ? { ...s, url } : s;
  });
}
