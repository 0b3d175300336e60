/**
 * The MCP endpoints of sessions: a capability URL (`/mcp/<session token>`, the token being the only
 * credential) and the API URL (`/v1/sessions/{id}/mcp` with `Authorization: Bearer <session token>`).
 * Both serve the same toolbox; POST carries JSON-RPC, GET and DELETE are answered as the transport says.
 */
import { z } from 'zod';
import { rawRoute, type Route, type RequestContext, type Method, type RouteResponse } from '../route.js';
import { ErrorBody } from '../api/index.js';
import { HttpError } from '../http-error.js';
import type { SessionMcpEndpoints } from '../mcp-endpoints.js';

/** Documents the body only: the MCP transport reads and checks it (the routes are raw). */
const MCP_BODY = z.looseObject({}).describe('One JSON-RPC 2.0 message (MCP 2026-07-28 or 2025-era).');

export function mcpRoutes(endpoints: SessionMcpEndpoints): Route[] {
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
  }
  return routes;
}
