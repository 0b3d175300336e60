/**
 * The `connections` of an agent's spec, checked as the agent is published (pure: no I/O). A connection is what
 * each end user makes themselves — an OAuth grant of their own account — for one of the agent's remote MCP
 * servers (`mcp_server`), or for an egress origin whose OAuth provider is named by its issuer (`origin` and
 * `issuer`). Every problem names the connection, what was wrong and what is accepted.
 */
import type { Problem } from '../errors.js';
import { isHttpsOrLoopback } from '../common/index.js';
import type { AgentConnection, AgentRemoteServer } from './store/index.js';

/** A connection as the API receives it. */
export interface ConnectionInput {
  name: string;
  mcp_server?: string;
  origin?: string;
  issuer?: string;
  scopes?: string[];
  client_id?: string;
}

const CONNECTION_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** RFC 6749 §3.3: a scope token is printable ASCII but space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/;
export const MAX_CONNECTIONS = 16;

export function checkConnections(inputs: readonly ConnectionInput[], servers: readonly AgentRemoteServer[], problems: Problem[]): AgentConnection[] {
  const out: AgentConnection[] = [];
  const names = new Set<string>();
  const serversTaken = new Set<string>();
  const originsTaken = new Set<string>();
  const problem = (where: string, message: string): void => {
    problems.push({ code: 'agent.connection', message: `${where}: ${message}` });
  };
  if (inputs.length > MAX_CONNECTIONS) problem('connections', `at most ${MAX_CONNECTIONS} connections (got ${inputs.length})`);
  for (const [i, input] of inputs.entries()) {
    const where = `connections[${i}]`;
    if (typeof input.name !== 'string' || !CONNECTION_NAME.test(input.name)) {
      problem(where, `name ${JSON.stringify(input.name)} must be 1-64 characters of a-z, 0-9, "_" and "-", starting with a letter or digit`);
    } else if (names.has(input.name)) problem(where, `the name ${input.name} is used by another connection of this agent; each connection needs its own`);
    names.add(input.name);

    const byServer = input.mcp_server !== undefined;
    const byOrigin = input.origin !== undefined || input.issuer !== undefined;
    let origin: string | null = null;
    let issuer: string | null = null;
    if (byServer === byOrigin) {
      problem(where, 'name either mcp_server (one of this agent\'s remote MCP servers, whose OAuth is discovered) or origin and issuer (an egress origin and its OAuth provider), not both and not neither');
    } else if (byServer) {
      const server = servers.find((s) => s.name === input.mcp_server);
      if (server === undefined) {
        problem(where, `mcp_server ${JSON.stringify(input.mcp_server)} is not one of this agent's mcp_servers (${servers.map((s) => s.name).join(', ') || 'it has none'})`);
      } else if (serversTaken.has(server.name)) {
        problem(where, `remote MCP server ${server.name} already has a connection; a server takes one`);
      } else if (server.credential !== null) {
        problem(where, `remote MCP server ${server.name} has an operator credential (mcp_servers[].credential); its calls carry either that or each user's own connection, so remove one of them`);
      }
      serversTaken.add(input.mcp_server!);
    } else {
      origin = checkOrigin(input.origin, where, problem);
      if (origin !== null && originsTaken.has(origin)) problem(where, `origin ${origin} already has a connection; an origin takes one`);
      if (origin !== null) originsTaken.add(origin);
      if (typeof input.issuer !== 'string' || !isHttpsOrLoopback(input.issuer) || new URL(input.issuer).hash !== '' || new URL(input.issuer).search !== '') {
        problem(where, `issuer ${JSON.stringify(input.issuer ?? null)} must be the OAuth provider's issuer: an https URL without query or fragment (http only on loopback)`);
      } else issuer = input.issuer;
    }

    const scopes = input.scopes ?? [];
    for (const [k, scope] of scopes.entries()) {
      if (typeof scope !== 'string' || !SCOPE_TOKEN.test(scope)) problem(`${where}.scopes[${k}]`, `${JSON.stringify(scope)} is not a scope: one token of printable characters without spaces, quotes or backslashes (RFC 6749 §3.3)`);
    }
    if (new Set(scopes).size !== scopes.length) problem(`${where}.scopes`, 'a scope is named twice');
    if (input.client_id !== undefined && (typeof input.client_id !== 'string' || input.client_id.trim() === '' || input.client_id.length > 256 || /[\x00-\x1f\x7f]/.test(input.client_id))) {
      problem(where, 'client_id must be the id the authorization server gave a client registered beforehand: 1-256 characters without control characters');
    }
    out.push({
      name: input.name, mcp_server: byServer ? input.mcp_server! : null, origin, issuer, scopes: [...scopes], client_id: input.client_id ?? null,
    });
  }
  return out;
}

/** An egress origin: https (http only on loopback), host and port only. */
function checkOrigin(text: string | undefined, where: string, problem: (where: string, message: string) => void): string | null {
  const refuse = (): null => {
    problem(where, `origin ${JSON.stringify(text ?? null)} must be an origin: https://host[:port] with no path, query or credentials (http only on loopback); name the issuer of its OAuth provider with it`);
    return null;
  };
  if (typeof text !== 'string' || !isHttpsOrLoopback(text)) return refuse();
  const url = new URL(text);
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return refuse();
  return url.origin;
}
