/**
 * The MCP endpoints of sessions: a capability URL (`/mcp/<session token>`, the token being the only
 * credential) and the API URL (`/v1/sessions/{id}/mcp` with `Authorization: Bearer <session token>`).
 * Both serve the same toolbox; POST carries JSON-RPC, GET and DELETE are answered as the transport says.
 *
 * With OAuth at the door on (oauth-door.ts), also each agent's endpoint (`/v1/agents/{id}/mcp` with an access
 * token from the deployment's authorization server), which serves the session of the token's user with that
 * agent, opened on the first request and resumed after; and the RFC 9728 metadata of both protected endpoints.
 */
import { z } from 'zod';
import { rawRoute, route, type Route, type RequestContext, type Method, type RouteResponse } from '../route.js';
import { ErrorBody } from '../api/index.js';
import { HttpError } from '../http-error.js';
import type { SessionMcpEndpoints } from '../mcp-endpoints.js';
import type { OAuthDoor } from '../oauth-door.js';
import { DOOR_PROTECTED_PATHS, PROTECTED_RESOURCE_WELL_KNOWN } from '../protected-resource.js';

/** Documents the body only: the MCP transport reads and checks it (the routes are raw). */
const MCP_BODY = z.looseObject({}).describe('One JSON-RPC 2.0 message (MCP 2026-07-28 or 2025-era).');

export function mcpRoutes(endpoints: SessionMcpEndpoints, door?: OAuthDoor): Route[] {
  const byToken = async (ctx: RequestContext<undefined>): Promise<null> => {
    const session = await ctx.platform.sessions.byToken(ctx.params.token);
    if (!session) throw new HttpError(404, 'not_found', 'no live session has this MCP URL');
    await endpoints.serve(session, ctx.req, ctx.res);
    return null;
  };
  const byBearer = async (ctx: RequestContext<undefined>): Promise<null> => {
    // The router authenticated the session token against {id}.
    await endpoints.serve(ctx.session!, ctx.req, ctx.res);
    return null;
  };
  const byDoor = async (ctx: RequestContext<undefined>): Promise<null> => {
    // The router checked the access token and named its user; the platform is given the user, never the token.
    const session = await ctx.platform.sessions.openAtDoor(ctx.params.id, ctx.doorUser!);
    await endpoints.serve(session, ctx.req, ctx.res);
    return null;
  };
  const routes: Route[] = [];
  for (const method of ['POST', 'GET', 'DELETE'] as Method[]) {
    const responses: Record<number, RouteResponse> = {
      200: { description: 'The JSON-RPC answer (JSON or an SSE stream).' },
    };
    if (method === 'POST') responses[202] = { description: 'A notification was accepted.' };
    Object.assign(responses, {
      400: { description: 'Not a usable MCP request.' },
      403: { description: 'The Origin is not allowed.' },
      404: { description: 'No such session.', schema: ErrorBody },
      405: { description: 'The transport does not serve this method.' },
    });
    const common = { method, tag: 'mcp', raw: true as const, responses };
    routes.push(rawRoute({
      ...common, path: '/mcp/{token}', operationId: `mcpCapability${method[0]}${method.slice(1).toLowerCase()}`, auth: 'none',
      summary: `${method} to a session's MCP endpoint by its capability URL (possession of the URL is the credential).`,
      ...(method === 'POST' ? { body: { kind: 'json' as const, schema: MCP_BODY } } : {}),
      handler: byToken,
    }));
    routes.push(rawRoute({
      ...common, path: '/v1/sessions/{id}/mcp', operationId: `mcpSession${method[0]}${method.slice(1).toLowerCase()}`, auth: 'session',
      summary: `${method} to a session's MCP endpoint with "Authorization: Bearer <session token>".`,
      ...(method === 'POST' ? { body: { kind: 'json' as const, schema: MCP_BODY } } : {}),
      responses: { ...common.responses, 401: { description: 'Missing or wrong session token.', schema: ErrorBody } },
      handler: byBearer,
    }));
    if (door) {
      routes.push(rawRoute({
        ...common, path: '/v1/agents/{id}/mcp', operationId: `mcpAgent${method[0]}${method.slice(1).toLowerCase()}`, auth: 'door',
        summary: `${method} to an agent's MCP endpoint with an access token from the deployment's authorization server: the token's user's session with the agent, opened or resumed.`,
        ...(method === 'POST' ? { body: { kind: 'json' as const, schema: MCP_BODY } } : {}),
        responses: {
          ...common.responses,
          401: { description: 'No access token, or one that fails a check; the challenge names the resource metadata.', schema: ErrorBody },
          403: { description: 'The token lacks a scope, or its user is not known here.', schema: ErrorBody },
          404: { description: 'No such agent.', schema: ErrorBody },
        },
        handler: byDoor,
      }));
    }
  }
  if (door) routes.push(...DOOR_PROTECTED_PATHS.map((path) => metadataRoute(path, door)));
  return routes;
}

/** RFC 9728: the protected resource metadata of one protected endpoint, at its well-known path. */
function metadataRoute(protectedPath: string, door: OAuthDoor): Route {
  const kind = protectedPath.startsWith('/v1/agents/') ? 'Agent' : 'Session';
  return route({
    method: 'GET', path: `${PROTECTED_RESOURCE_WELL_KNOWN}${protectedPath}`, operationId: `get${kind}McpResourceMetadata`, tag: 'mcp', auth: 'none',
    summary: `The OAuth protected resource metadata (RFC 9728) of ${kind === 'Agent' ? 'an agent' : 'a session'}'s MCP endpoint: its authorization server and scopes.`,
    responses: { 200: { description: 'The metadata document.', schema: RESOURCE_METADATA } },
    async handler({ baseUrl, req }) {
      const path = new URL(req.url ?? '/', 'http://x').pathname.slice(PROTECTED_RESOURCE_WELL_KNOWN.length);
      return { status: 200, body: door.metadata(`${baseUrl}${path}`), headers: { 'cache-control': 'public, max-age=300' } };
    },
  });
}

const RESOURCE_METADATA = z.object({
  resource: z.string(), authorization_servers: z.array(z.string()), scopes_supported: z.array(z.string()),
  bearer_methods_supported: z.array(z.string()), resource_name: z.string(),
});
