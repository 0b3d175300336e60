/**
 * How a session names its remote servers' resources: `subako-mcp://<server>/<the server's own URI, unchanged>`.
 *
 * Two servers may both have `file:///notes.txt`, and a server may list any URI it likes, another server's
 * included; so no URI is served as its server wrote it. The server's name (the agent's, 1-64 of a-z 0-9 _ -)
 * is the authority, and everything after the first `/` that follows it is the server's URI byte for byte: the
 * mapping is reversible without decoding anything, a server cannot name a resource of another (what it lists is
 * always put under its own name, so `subako-mcp://b/x` listed by `a` becomes `subako-mcp://a/subako-mcp://b/x`,
 * read from `a`), and resource templates keep working: a template gets the same prefix, and a client's expansion
 * of `subako-mcp://a/file:///{path}` is exactly the prefix followed by the server's own expansion.
 */
import { isRelayableUri } from '../../mcp/index.js';

export const SESSION_RESOURCE_SCHEME = 'subako-mcp';

const SERVER_NAME = /^[a-z0-9_-]{1,64}$/;
const SESSION_URI = /^subako-mcp:\/\/([a-z0-9_-]{1,64})\/([^]*)$/;

/** A server's resource URI (or URI template) as the session serves it. */
export function sessionResourceUri(server: string, uri: string): string {
  if (!SERVER_NAME.test(server)) throw new TypeError(`${JSON.stringify(server)} is not a remote MCP server's name`);
  return `${SESSION_RESOURCE_SCHEME}://${server}/${uri}`;
}

/** The server and its own URI for a URI the session served, or undefined when it is not one (or names nothing relayable). */
export function parseSessionResourceUri(uri: string): { server: string; uri: string } | undefined {
  const match = SESSION_URI.exec(uri);
  if (!match || !isRelayableUri(match[2])) return undefined;
  return { server: match[1], uri: match[2] };
}
