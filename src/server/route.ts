/**
 * The route table's types. A route names its method, path template, authentication, body and query
 * schemas and responses; the router dispatches from the same table that the OpenAPI document is generated
 * from, so the two cannot disagree.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonSchema } from '../tool.js';
import type { ApiKeyRecord, SessionRecord, Platform } from '../platform/index.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Who may call: an API key; an API key or the session's own token; the session's own token only; or anyone
 * (capability URLs, the docs). "The session's own" means the token's session is the `{id}` of the path.
 */
export type RouteAuth = 'api_key' | 'api_key_or_session' | 'session' | 'none';

export type RouteBody =
  | { kind: 'json'; schema: JsonSchema; maxBytes?: number; /** An absent body counts as `{}`. */ optional?: boolean }
  | { kind: 'binary'; contentTypes: string[]; maxBytes: number; description: string };

export interface RouteResponse {
  description: string;
  schema?: JsonSchema;
  contentType?: string;
}

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: Record<string, string>;
  /** Parsed and validated JSON, raw bytes for binary bodies, undefined without a body. */
  body: unknown;
  apiKey: ApiKeyRecord | null;
  /** The session whose token authenticated the request (api_key_or_session routes). */
  session: SessionRecord | null;
  platform: Platform;
  /** `http://host:port` as the client reached us, for URLs in answers. */
  baseUrl: string;
  signal: AbortSignal;
}

export interface HandlerResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Route {
  method: Method;
  /** With `{name}` parameters, e.g. `/v1/agents/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: RouteAuth;
  body?: RouteBody;
  /** Query parameters: name to schema (all optional strings on the wire, converted by the schema). */
  query?: Record<string, JsonSchema>;
  responses: Record<number, RouteResponse>;
  /** Handlers that answer the response themselves (MCP endpoints) return null. */
  handler(ctx: RequestContext): Promise<HandlerResult | null>;
  /**
   * Answer fields that are secrets shown once (a session token): an Idempotency-Key replay answers without
   * them, since they are never stored in plain text.
   */
  replayOmits?: string[];
  /** The raw handler takes the request stream as it is (the body is not read or validated first). */
  raw?: boolean;
  /**
   * The handler honours the Idempotency-Key header itself (a tool call: the platform's call keys), and this is
   * what the OpenAPI document says of it; the router's replay of stored answers then leaves the route alone.
   */
  ownIdempotencyKey?: string;
}
