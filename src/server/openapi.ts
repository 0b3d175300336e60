/**
 * The OpenAPI 3.1 document, generated from the route table the router dispatches from: every route is an
 * operation, its path parameters come from the template, its body and answers from the route's schemas (zod,
 * server/api/, as JSON Schema: the very objects the router checks bodies against).
 */
import type { Route, RouteResponse } from './route.js';
import { ErrorBody } from './api/index.js';
import { jsonSchemaOf } from './json-schema-of.js';
import { SUBAKO_VERSION } from '../version.js';

export function openApiDocument(routes: readonly Route[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      security: security(route),
      parameters: [
        ...[...route.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } })),
        ...Object.entries(route.query ?? {}).map(([name, schema]) => ({ name, in: 'query', required: false, schema })),
        ...(route.method === 'POST' && !route.raw
          ? [{
            name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 },
            description: route.ownIdempotencyKey ?? 'Retries with the same key and body replay the first answer.',
          }]
          : []),
      ],
      responses: Object.fromEntries(
        Object.entries({ ...route.responses, ...defaultErrors(route) }).map(([status, r]) => [
          status,
          {
            description: r.description,
            ...(r.schema ? { content: { [r.contentType ?? 'application/json']: { schema: jsonSchemaOf(r.schema) } } } : {}),
          },
        ]),
      ),
    };
    if (route.body) {
      operation.requestBody = route.body.kind === 'json'
        ? { required: !route.body.optional, content: { 'application/json': { schema: jsonSchemaOf(route.body.schema) } } }
        : {
          required: true,
          description: route.body.description,
          content: Object.fromEntries(route.body.contentTypes.map((type) => [type, { schema: { type: 'string', contentMediaType: type } }])),
        };
    }
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'subako platform API',
      version: SUBAKO_VERSION,
      description: 'Function packages, agents, end users, vaults, sessions and their MCP endpoints. Lists take limit (<= 200) and after, and answer {items, next_cursor}; errors answer {"error": {"code", "message"}}.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (sk_…): scope admin (anything) or read (GET requests only).' },
        sessionToken: { type: 'http', scheme: 'bearer', description: 'A session token (st_…), given when the session is created.' },
        // Only in a deployment with OAuth at the door on: its routes are in the table only then.
        ...(routes.some((route) => route.auth === 'door')
          ? { doorAccessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: "An access token from the deployment's authorization server (OAuth at the door)." } }
          : {}),
      },
      schemas: { Error: jsonSchemaOf(ErrorBody) },
    },
    paths,
  };
}

function security(route: Route): Record<string, string[]>[] {
  switch (route.auth) {
    case 'api_key': return [{ apiKey: [] }];
    case 'api_key_or_session': return [{ apiKey: [] }, { sessionToken: [] }];
    case 'session': return [{ sessionToken: [] }];
    case 'door': return [{ doorAccessToken: [] }];
    default: return [];
  }
}

function defaultErrors(route: Route): Record<number, RouteResponse> {
  const out: Record<number, RouteResponse> = {};
  if (route.auth !== 'none') out[401] = { description: 'Missing or invalid bearer token.', schema: ErrorBody };
  if ((route.auth === 'api_key' || route.auth === 'api_key_or_session') && route.method !== 'GET') {
    out[403] = { description: 'The API key is read-only (scope read): it may only GET.', schema: ErrorBody };
  }
  if (route.body && !route.raw) {
    out[400] = route.responses[400] ?? { description: 'The body is not valid.', schema: ErrorBody };
    out[413] = { description: 'The body is too large.', schema: ErrorBody };
    out[415] = { description: 'Wrong Content-Type.', schema: ErrorBody };
  }
  if (route.query) out[400] = route.responses[400] ?? { description: 'A query parameter is not valid.', schema: ErrorBody };
  return out;
}
