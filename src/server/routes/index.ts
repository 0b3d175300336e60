/** The whole route table: the router and the OpenAPI document both read this one list. */
import { z } from 'zod';
import { rawRoute, route, type Route } from '../route.js';
import { Health } from '../api/index.js';
import { openApiDocument } from '../openapi.js';
import type { SessionMcpEndpoints } from '../mcp-endpoints.js';
import type { CallStreams } from '../call-stream.js';
import type { ServerMetrics } from '../metrics.js';
import type { OAuthDoor } from '../oauth-door.js';
import { agentRoutes } from './agents.js';
import { approvalRoutes } from './approvals.js';
import { callRoutes } from './calls.js';
import { keyRoutes } from './keys.js';
import { mcpRoutes } from './mcp.js';
import { packageRoutes } from './packages.js';
import { sessionRoutes } from './sessions.js';
import { sessionFileRoutes } from './session-files.js';
import { vaultRoutes } from './vaults.js';
import { userRoutes } from './users.js';
import { connectionRoutes } from './connections.js';

export function buildRoutes(options: { endpoints: SessionMcpEndpoints; maxBundleBytes: number; streams: CallStreams; metrics: ServerMetrics; door?: OAuthDoor }): Route[] {
  const routes: Route[] = [
    ...packageRoutes(options.maxBundleBytes),
    ...agentRoutes(),
    ...sessionRoutes(),
    ...approvalRoutes(),
    ...callRoutes(options.streams),
    ...sessionFileRoutes(),
    ...vaultRoutes(),
    ...userRoutes(),
    ...connectionRoutes(),
    ...keyRoutes(),
    ...mcpRoutes(options.endpoints, options.door),
    metricsRoute(options.metrics),
  ];
  let document: Record<string, unknown> | null = null;
  routes.push(
    route({
      method: 'GET', path: '/v1/openapi.json', operationId: 'getOpenApi', tag: 'meta', auth: 'none',
      summary: 'This document.',
      responses: { 200: { description: 'The OpenAPI 3.1 document.', schema: z.record(z.string(), z.unknown()) } },
      async handler() {
        document ??= openApiDocument(routes);
        return { status: 200, body: document };
      },
    }),
    route({
      method: 'GET', path: '/v1/health', operationId: 'getHealth', tag: 'meta', auth: 'none',
      summary: 'Whether the server is up, and whether it can do its work: its store, and with NATS the bus and the fleet of workers. '
        + 'Answers 200 while the process serves; `status` is `degraded` (and `ok` false) with a reason per missing part.',
      responses: { 200: { description: 'Up; `status` says whether every part is there.', schema: Health } },
      async handler({ platform }) {
        return { status: 200, body: await platform.health() };
      },
    }),
  );
  return routes;
}

/**
 * /metrics takes an API key, and a read-only one is enough (give Prometheus its own: `subako keys create
 * --name prometheus --scope read`, sent as `authorization` in the scrape config). Not "open on loopback":
 * behind a reverse proxy on the same machine every request comes from loopback, and tool names and traffic
 * are the operator's business.
 */
function metricsRoute(metrics: ServerMetrics): Route {
  return rawRoute({
    method: 'GET', path: '/metrics', operationId: 'getMetrics', tag: 'meta', auth: 'api_key', raw: true,
    summary: 'Metrics in the Prometheus text format: calls, call durations, egress, sandbox workers and queue, compile cache, HTTP requests. Any API key (read is enough).',
    responses: { 200: { description: 'The metrics.', contentType: 'text/plain; version=0.0.4', schema: z.string() } },
    async handler({ res }) {
      const text = await metrics.text();
      res.writeHead(200, { 'content-type': metrics.contentType, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
      res.end(text);
      return null;
    },
  });
}
