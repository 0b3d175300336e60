/** The whole route table: the router and the OpenAPI document both read this one list. */
import type { Route } from '../route.js';
import { openApiDocument } from '../openapi.js';
import type { SessionMcpEndpoints } from '../mcp-endpoints.js';
import { agentRoutes } from './agents.js';
import { approvalRoutes } from './approvals.js';
import { mcpRoutes } from './mcp.js';
import { packageRoutes } from './packages.js';
import { sessionRoutes } from './sessions.js';
import { vaultRoutes } from './vaults.js';
import { SUBAKO_VERSION } from '../../version.js';

export function buildRoutes(options: { endpoints: SessionMcpEndpoints; maxBundleBytes: number }): Route[] {
  const routes: Route[] = [
    ...packageRoutes(options.maxBundleBytes),
    ...agentRoutes(),
    ...sessionRoutes(),
    ...approvalRoutes(),
    ...vaultRoutes(),
    ...mcpRoutes(options.endpoints),
  ];
  let document: Record<string, unknown> | null = null;
  routes.push(
    {
      method: 'GET', path: '/v1/openapi.json', operationId: 'getOpenApi', tag: 'meta', auth: 'none',
      summary: 'This document.',
      responses: { 200: { description: 'The OpenAPI 3.1 document.', schema: { type: 'object' } } },
      async handler() {
        document ??= openApiDocument(routes);
        return { status: 200, body: document };
      },
    },
    {
      method: 'GET', path: '/v1/health', operationId: 'getHealth', tag: 'meta', auth: 'none',
      summary: 'Whether the server is up.',
      responses: { 200: { description: 'Up.', schema: { type: 'object', properties: { ok: { type: 'boolean' }, version: { type: 'string' } } } } },
      async handler() {
        return { status: 200, body: { ok: true, version: SUBAKO_VERSION } };
      },
    },
  );
  return routes;
}
