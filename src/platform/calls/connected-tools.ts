/**
 * The tools of a remote MCP server that an agent reaches with each end user's own connection (connections.ts):
 * every call looks up the session's user's token as it starts — refreshed when about to expire, so a refresh or a
 * disconnect counts from the next call on — and sends it only with that call's request to that server.
 *
 * A call that finds no usable connection (never made, ended, expired with no working refresh, or refused by the
 * server as no longer valid) does not fail: the person is asked to connect. To a client that declared URL-mode
 * elicitation, as an MCP 2026-07-28 input request carrying the consent link (`input_required`; the client opens it,
 * the person consents, and the client's retry of the same call runs it); to any other caller, as a tool result with
 * `isError` whose text carries the link for the model to show. The token is never in either.
 */
import { randomUUID } from 'node:crypto';
import { McpAuthError, McpServerError, ToolInputRequiredError } from '../../mcp/index.js';
import { toolDefinition, type CallToolResult, type Tool, type ToolCallContext } from '../../tool.js';
import type { ConnectionService, ConsentSubject } from '../connections.js';
import type { RemoteMcp } from '../remote-mcp.js';
import type { AgentConnection, AgentRemoteServer } from '../store/index.js';

export interface ConnectedToolDeps {
  connections: Pick<ConnectionService, 'headersFor' | 'consentLink'>;
  remote: Pick<RemoteMcp, 'tools'>;
}

/** Who the call is for: the session's user (null: a session of no user, which has no connections). */
export interface ConnectedCaller {
  userId: string | null;
  sessionId: string;
  agentId: string;
  agentVersion: number;
}

/** The input request's key: the client answers under it on its retry. */
export const connectInputKey = (connection: string): string => `connect_${connection}`;

/** `definition`'s calls, made with the user's token for `connection` to `server` alone. */
export function connectedTool(definition: Tool, server: AgentRemoteServer, connection: AgentConnection, caller: ConnectedCaller, deps: ConnectedToolDeps): Tool {
  const tool: Tool = {
    ...shapeOf(definition),
    async call(args: Record<string, unknown>, ctx: ToolCallContext = {}): Promise<CallToolResult> {
      if (caller.userId === null) {
        return failure(`the tool ${definition.name} acts with an end user's own ${connection.name} account, and this session acts for no user; open the session for a user (user_id) to use it`);
      }
      const subject: ConsentSubject = { userId: caller.userId, sessionId: caller.sessionId, agentId: caller.agentId, agentVersion: caller.agentVersion, connection: connection.name };
      const headers = await deps.connections.headersFor(caller.userId, connection.name);
      if (headers === null) return askToConnect(deps, subject, definition.name, ctx);
      const upstream = await deps.remote.tools(server.url, headers).catch((err: unknown) => {
        if (isUnauthorized(err)) return null;
        throw err;
      });
      if (upstream === null) return askToConnect(deps, subject, definition.name, ctx);
      const listed = Object.prototype.hasOwnProperty.call(upstream, definition.name) ? upstream[definition.name] : undefined;
      if (listed === undefined) return failure(`remote MCP server ${server.name} no longer lists the tool ${definition.name} for this user`);
      try {
        return await listed.call(args, ctx);
      } catch (err) {
        // The server no longer takes the token (revoked at the authorization server): the person connects again.
        if (isUnauthorized(err)) return askToConnect(deps, subject, definition.name, ctx);
        throw err;
      }
    },
  };
  return Object.freeze(tool);
}

/**
 * A package's tool whose egress reaches origins the agent declares connections for: a call first makes sure its user
 * has made each (else it asks, as above); the token itself is attached by the egress, as the session's credential for
 * that origin (agent-toolbox.ts), never seen by the guest.
 */
export function egressConnectedTool(definition: Tool, connections: readonly AgentConnection[], caller: ConnectedCaller, deps: ConnectedToolDeps): Tool {
  return Object.freeze({
    ...shapeOf(definition),
    async call(args: Record<string, unknown>, ctx: ToolCallContext = {}): Promise<CallToolResult> {
      if (caller.userId === null) {
        return failure(`the tool ${definition.name} reaches ${connections.map((c) => c.origin).join(', ')} with an end user's own account, and this session acts for no user; open the session for a user (user_id) to use it`);
      }
      for (const connection of connections) {
        if ((await deps.connections.headersFor(caller.userId, connection.name)) === null) {
          const subject: ConsentSubject = { userId: caller.userId, sessionId: caller.sessionId, agentId: caller.agentId, agentVersion: caller.agentVersion, connection: connection.name };
          return askToConnect(deps, subject, definition.name, ctx);
        }
      }
      return definition.call(args, ctx);
    },
  });
}

/** A tool's description, field by field (a class's instance spreads only its own fields), with where it came from. */
function shapeOf(tool: Tool): Omit<Tool, 'call'> {
  return { ...toolDefinition(tool.name, tool), ...(tool.source !== undefined ? { source: tool.source } : {}) };
}

/** The consent link, as an input request where the client can open URLs, else as a result the model shows. */
function askToConnect(deps: ConnectedToolDeps, subject: ConsentSubject, tool: string, ctx: ToolCallContext): CallToolResult {
  const link = deps.connections.consentLink(subject);
  const message = `The tool ${tool} needs your ${subject.connection} account. Open the link to connect it, then the call runs.`;
  if (ctx.input?.accepts?.url === true) {
    // No requestState: the retry is the same call made afresh, and finds the connection made.
    throw new ToolInputRequiredError(message, {
      [connectInputKey(subject.connection)]: { method: 'elicitation/create', params: { mode: 'url', message, url: link, elicitationId: randomUUID() } },
    });
  }
  return failure(`The tool ${tool} needs the user's ${subject.connection} account, which is not connected (or its authorization ran out). ` +
    `Ask the user to open this link to connect it, then call the tool again: ${link}`);
}

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** A refusal of the token itself: HTTP 401, or the client's own word that the credential is missing or expired. */
function isUnauthorized(err: unknown): boolean {
  return err instanceof McpAuthError || (err instanceof McpServerError && err.httpStatus === 401);
}
