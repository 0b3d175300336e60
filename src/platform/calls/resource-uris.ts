/**
 * How a session names its remote servers' resources (and resource templates).
 *
 * The rule: when the agent version has exactly one remote MCP server, that server's URIs are served as it wrote
 * them; otherwise each is served as `subako-mcp://<server>/<the server's own URI, unchanged>`.
 *
 * Why this rule. Two servers may both have `file:///notes.txt`, and a server may list any URI it likes, another
 * server's included; so when an agent has several, no URI can be served as its server wrote it: the server's name
 * (the agent's, 1-64 of a-z 0-9 _ -) becomes the authority, and everything after the first `/` that follows it is
 * the server's URI byte for byte. The mapping is reversible without decoding anything, a server cannot name a
 * resource of another (what it lists is always put under its own name, so `subako-mcp://b/x` listed by `a` becomes
 * `subako-mcp://a/subako-mcp://b/x`, read from `a`), and resource templates keep working: a template gets the same
 * prefix, and a client's expansion of `subako-mcp://a/file:///{path}` is exactly the prefix followed by the
 * server's own expansion. With one remote server there is no other server to take a name from (function packages
 * have no resources: ABI 1 is tools only), so the prefix protects nothing, and the server's own URIs — the ones its
 * documentation, its prompts and its tools' results use — work through the session as they are. The choice is a
 * property of the agent version (how many remote servers it names), never of what a server lists or of which
 * server answered: it cannot change under a session, and publishing a second server makes a new version whose
 * sessions prefix.
 */
import { isRelayableUri } from '../../mcp/index.js';

export const SESSION_RESOURCE_SCHEME = 'subako-mcp';

const SERVER_NAME = /^[a-z0-9_-]{1,64}$/;
const SESSION_URI = /^subako-mcp:\/\/([a-z0-9_-]{1,64})\/([^]*)$/;

/** A server's resource URI (or URI template) as the session serves it when it prefixes. */
export function sessionResourceUri(server: string, uri: string): string {
  if (!SERVER_NAME.test(server)) throw new TypeError(`${JSON.stringify(server)} is not a remote MCP server's name`);
  return `${SESSION_RESOURCE_SCHEME}://${server}/${uri}`;
}

/** The server and its own URI for a prefixed URI the session served, or undefined when it is not one (or names nothing relayable). */
export function parseSessionResourceUri(uri: string): { server: string; uri: string } | undefined {
  const match = SESSION_URI.exec(uri);
  if (!match || !isRelayableUri(match[2])) return undefined;
  return { server: match[1], uri: match[2] };
}

/** How one session names its servers' resources, both ways. */
export interface ResourceNaming {
  /** Whether URIs are served as the servers wrote them (an agent version with one remote server). */
  readonly verbatim: boolean;
  /** A server's URI (or URI template) as the session serves it. */
  served(server: string, uri: string): string;
  /** The server and its own URI for a URI the session serves, or undefined when it names none. */
  parse(uri: string): { server: string; uri: string } | undefined;
  /** How a client should name a resource of this session, for an error message. */
  readonly form: string;
}

/** The naming for an agent version whose remote MCP servers are `servers` (their names, in its order). */
export function resourceNaming(servers: readonly string[]): ResourceNaming {
  if (servers.length === 1) {
    const only = servers[0];
    return Object.freeze({
      verbatim: true,
      served: (_server: string, uri: string) => uri,
      parse: (uri: string) => (isRelayableUri(uri) ? { server: only, uri } : undefined),
      form: `the URIs resources/list gives (the server ${only}'s own)`,
    });
  }
  return Object.freeze({
    verbatim: false,
    served: sessionResourceUri,
    parse: parseSessionResourceUri,
    form: `subako-mcp://<server>/<the server's URI>, as resources/list gives them`,
  });
}
