/**
 * The route table's types. A route names its method, path template, authentication, body and query
 * schemas and responses; the router dispatches from the same table that the OpenAPI document is generated
 * from, so the two cannot disagree. Bodies and answers are zod schemas (server/api/): a route made with
 * `route()` hands its handler the body typed by its schema, and holds the handler to answering, for each
 * status, the body its response's schema declares.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { JsonSchema } from '../tool.js';
import type { ApiKeyRecord, SessionRecord, Platform } from '../platform/index.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Who may call: an API key; an API key or the session's own token; the session's own token only; or anyone
 * (capability URLs, the docs). "The session's own" means the token's session is the `{id}` of the path. `door`: an
 * access token from the authorization server of OAuth at the door only (oauth-door.ts); with the door on, a
 * `session` route takes one too, when the token's user is the session's.
 */
export type RouteAuth = 'api_key' | 'api_key_or_session' | 'session' | 'door' | 'none';

export interface JsonBody<Schema extends z.ZodType = z.ZodType> {
  kind: 'json';
  schema: Schema;
  maxBytes?: number;
  /** An absent body counts as `{}`. */
  optional?: boolean;
}

export interface BinaryBody {
  kind: 'binary';
  contentTypes: string[];
  maxBytes: number;
  description: string;
}

export type RouteBody = JsonBody | BinaryBody;

export interface RouteResponse {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
}

export type RouteResponses = Record<number, RouteResponse>;

export interface RequestContext<Body = unknown> {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: Record<string, string>;
  /** Parsed and validated JSON, raw bytes for binary bodies, undefined without a body. */
  body: Body;
  apiKey: ApiKeyRecord | null;
  /** The session whose token authenticated the request (api_key_or_session routes). */
  session: SessionRecord | null;
  /** The platform user whose access token came through OAuth at the door (door routes, and session routes with the door on). */
  doorUser: string | null;
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

/** What the router gives a handler as its body: the schema's type, the bytes, or nothing. */
export type BodyOf<B> = B extends JsonBody<infer Schema> ? z.output<Schema> : B extends BinaryBody ? Buffer : undefined;

/**
 * The answers a route's responses allow: for each status, the body its schema declares (none without a schema).
 * (`Literal<Status>` is the status itself; said through a conditional type, it keeps a handler's `status: 201`
 * the literal 201 while the route's types are still being inferred, where a plain key would widen it to number.)
 */
export type AnswerOf<R extends RouteResponses> = {
  [Status in keyof R & number]: R[Status] extends { schema: infer Schema extends z.ZodType }
    ? { status: Literal<Status>; body: z.input<Schema>; headers?: Record<string, string> }
    : { status: Literal<Status>; body?: undefined; headers?: Record<string, string> };
}[keyof R & number];

type Literal<Status> = Status extends number ? Status : never;

interface RouteFields {
  method: Method;
  /** With `{name}` parameters, e.g. `/v1/agents/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: RouteAuth;
  /** Query parameters: name to schema (all optional strings on the wire, converted by the schema). */
  query?: Record<string, JsonSchema>;
  /**
   * Answer fields that are secrets shown once (a session token): an Idempotency-Key replay answers without
   * them, since they are never stored in plain text.
   */
  replayOmits?: string[];
  /**
   * The handler honours the Idempotency-Key header itself (a tool call: the platform's call keys), and this is
   * what the OpenAPI document says of it; the router's replay of stored answers then leaves the route alone.
   */
  ownIdempotencyKey?: string;
}

/** A route of the table, whatever its body and answers. */
export interface Route extends RouteFields {
  body?: RouteBody;
  responses: RouteResponses;
  /** Handlers that answer the response themselves (MCP endpoints) return null. */
  handler(ctx: RequestContext): Promise<HandlerResult | null>;
  /** The raw handler takes the request stream as it is (the body is not read or validated first). */
  raw?: boolean;
}

/** A route whose handler is given its validated body and answers through the router. */
export interface TypedRoute<B extends RouteBody | undefined, R extends RouteResponses> extends RouteFields {
  body?: B;
  responses: R;
  handler(ctx: RequestContext<BodyOf<B>>): Promise<AnswerOf<R>>;
  raw?: false;
}

/** A route whose handler takes the request as it is and answers it itself (a body schema, if any, only documents it). */
export interface RawRoute extends RouteFields {
  body?: RouteBody;
  responses: RouteResponses;
  handler(ctx: RequestContext<undefined>): Promise<null>;
  raw: true;
}

/** A route of the table, its handler typed by its body and response schemas. */
export function route<B extends RouteBody | undefined = undefined, R extends RouteResponses = RouteResponses>(definition: TypedRoute<B, R>): Route {
  return definition;
}

export function rawRoute(definition: RawRoute): Route {
  return definition;
}
