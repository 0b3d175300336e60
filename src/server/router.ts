/**
 * The router: matches a request against the route table, authenticates it, reads and checks its body and
 * query, honours Idempotency-Key on POST, runs the handler and writes the JSON answer. Every refusal is a
 * 4xx with `{"error": {"code", "message"}}`; a handler's unexpected failure is a 500 without details.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkAgainstSchema, queryParameter, REQUEST_BODY } from '../common/index.js';
import type { Access, Platform, ApiKeyRecord, SessionRecord } from '../platform/index.js';
import type { JsonSchema } from '../tool.js';
import { bearerChallenge } from './bearer-challenge.js';
import { readBody } from './body.js';
import { HttpError, toHttpError } from './http-error.js';
import { jsonSchemaOf } from './json-schema-of.js';
import { looksLikeJwt, type OAuthDoor } from './oauth-door.js';
import type { HandlerResult, RequestContext, Route } from './route.js';

export const DEFAULT_JSON_BODY_BYTES = 1024 * 1024;
const MAX_IDEMPOTENCY_KEY = 255;

interface CompiledRoute {
  route: Route;
  /** The path up to its first parameter: a request's path that does not start with it is not tried against `pattern`. */
  prefix: string;
  pattern: RegExp;
  names: string[];
  /** The JSON Schema of a JSON body, from its zod schema: the one the OpenAPI document shows. */
  bodySchema: JsonSchema | null;
}

export interface RouterOptions {
  platform: Platform;
  /** Reports unexpected failures (500s) for the operator; never given request bodies. */
  onError?: (err: unknown, route: Route | null) => void;
  /**
   * The URL clients reach the server at (e.g. `https://tools.example.com` behind a TLS proxy). URLs in answers
   * (session MCP endpoints) are built from it; without it, from the request's Host header over http.
   */
  publicUrl?: string;
  /** OAuth at the door, when the deployment turned it on: `door` routes need it, `session` routes take its tokens too. */
  door?: OAuthDoor;
}

export class Router {
  private readonly compiled: CompiledRoute[];
  private readonly inProgress = new Set<string>();

  constructor(readonly routes: readonly Route[], private readonly options: RouterOptions) {
    this.compiled = routes.map((route) => {
      const names: string[] = [];
      const source = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([a-z_]+)\}/g, (_, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      const bodySchema = route.body?.kind === 'json' && !route.raw ? jsonSchemaOf(route.body.schema) : null;
      const brace = route.path.indexOf('{');
      return { route, prefix: brace === -1 ? route.path : route.path.slice(0, brace), pattern: new RegExp(`^${source}$`), names, bodySchema };
    });
  }

  /**
   * Answers the request if a route's path matches it, and returns that route's path template (what access
   * logs and metrics name it by: never the path itself, which may carry a capability token); null when none does.
   * `onMatch` hears the template at once, before the answer (a stream's request may end before `handle` returns).
   */
  async handle(req: IncomingMessage, res: ServerResponse, signal: AbortSignal, onMatch?: (template: string) => void): Promise<string | null> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    // Every route whose path matches (a 405 names the methods they take); the cheap prefix test first, on every
    // request's path, as a regular expression run for each of the seventy-odd routes cost more than the session lookup.
    const matches: { c: CompiledRoute; m: RegExpExecArray }[] = [];
    for (const c of this.compiled) {
      if (!url.pathname.startsWith(c.prefix)) continue;
      const m = c.pattern.exec(url.pathname);
      if (m !== null) matches.push({ c, m });
    }
    if (matches.length === 0) return null;
    const match = matches.find((x) => x.c.route.method === req.method);
    onMatch?.((match ?? matches[0]).c.route.path);
    if (!match) {
      const allowed = [...new Set(matches.map((x) => x.c.route.method))].join(', ');
      writeJson(res, 405, { error: { code: 'method_not_allowed', message: `${req.method} is not supported here; use ${allowed}` } }, { allow: allowed });
      return matches[0].c.route.path;
    }
    const { route } = match.c;
    try {
      const params: Record<string, string> = {};
      match.c.names.forEach((name, i) => {
        try {
          params[name] = decodeURIComponent(match.m[i + 1]);
        } catch (error) {
          if (!(error instanceof URIError)) throw error; // expected: not percent-encoding
          throw new HttpError(400, 'bad_path', `the path parameter ${name} is not valid percent-encoding`);
        }
      });
      const ctx = await this.context(req, res, match.c, params, url, signal);
      if (route.raw) {
        await route.handler(ctx);
        return route.path;
      }
      const result = await this.withIdempotency(req, route, ctx);
      if (result) writeJson(res, result.status, result.body, result.headers);
    } catch (err) {
      const mapped = toHttpError(err);
      // A client that went away mid-request (its body cut off, the server closing its connection) is no failure of ours.
      if (mapped.internal && !req.destroyed) this.options.onError?.(err, route);
      if (!res.headersSent) writeJson(res, mapped.status, mapped.body, mapped.headers);
      else res.destroy();
    }
    return route.path;
  }

  private async context(req: IncomingMessage, res: ServerResponse, compiled: CompiledRoute, params: Record<string, string>, url: URL, signal: AbortSignal): Promise<RequestContext> {
    const { platform } = this.options;
    const { route, bodySchema } = compiled;
    const baseUrl = this.options.publicUrl ?? `http://${req.headers.host ?? 'localhost'}`;
    const { apiKey, session, doorUser } = await authenticate(platform, req, route, params, { door: this.options.door, resourceUrl: `${baseUrl}${url.pathname}` });
    const query = checkQuery(route, url.searchParams);
    let body: unknown;
    if (route.body && !route.raw) {
      const empty = req.headers['content-type'] === undefined && (req.headers['content-length'] ?? '0') === '0' && req.headers['transfer-encoding'] === undefined;
      if (route.body.kind === 'json' && route.body.optional && empty) {
        body = {};
      } else if (route.body.kind === 'json' && bodySchema) {
        requireContentType(req, ['application/json']);
        const raw = await readBody(req, route.body.maxBytes ?? DEFAULT_JSON_BODY_BYTES);
        body = parseJson(raw);
        // Checked against the JSON Schema of the route's zod schema: the body then is what the handler's type says.
        const check = checkAgainstSchema(bodySchema, body, REQUEST_BODY);
        if (!check.ok) {
          throw new HttpError(400, 'invalid_body', check.problems.map((p) => p.message).slice(0, 5).join('; '));
        }
      } else if (route.body.kind === 'binary') {
        requireContentType(req, route.body.contentTypes);
        const bytes = await readBody(req, route.body.maxBytes);
        if (bytes.length === 0) throw new HttpError(400, 'empty_body', 'the request body is empty');
        body = bytes;
      }
    }
    return { req, res, params, query, body, apiKey, session, doorUser, platform, baseUrl, signal };
  }

  /** Replays the stored answer of a POST already made with the same Idempotency-Key; refuses a key reused with another body. */
  private async withIdempotency(req: IncomingMessage, route: Route, ctx: RequestContext): Promise<HandlerResult | null> {
    const key = req.headers['idempotency-key'];
    if (route.method !== 'POST' || typeof key !== 'string' || route.ownIdempotencyKey !== undefined) return route.handler(ctx);
    if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY) {
      throw new HttpError(400, 'bad_idempotency_key', `Idempotency-Key must be 1-${MAX_IDEMPOTENCY_KEY} characters`);
    }
    const { store } = this.options.platform;
    const caller = ctx.apiKey?.id ?? ctx.session?.id ?? 'anonymous';
    const scope = `${caller} ${route.method} ${new URL(req.url ?? '/', 'http://x').pathname} ${key}`;
    const requestHash = createHash('sha256').update(Buffer.isBuffer(ctx.body) ? ctx.body : JSON.stringify(ctx.body ?? null)).digest('hex');
    const stored = await store.getIdempotent(scope);
    if (stored) {
      if (stored.requestHash !== requestHash) {
        throw new HttpError(422, 'idempotency_key_reused', 'this Idempotency-Key was used with a different request body');
      }
      return { status: stored.status, body: stored.body, headers: { 'idempotent-replayed': 'true' } };
    }
    if (this.inProgress.has(scope)) throw new HttpError(409, 'idempotency_in_progress', 'a request with this Idempotency-Key is still running');
    this.inProgress.add(scope);
    try {
      let result: HandlerResult | null;
      try {
        result = await route.handler(ctx);
      } catch (err) {
        const mapped = toHttpError(err);
        // A refusal to try now (429) is not the request's answer: a retry with the same key must run it.
        if (mapped.internal || mapped.status === 429) throw err;
        await store.putIdempotent({ scope, requestHash, status: mapped.status, body: mapped.body, createdAt: new Date().toISOString() });
        throw err;
      }
      if (result && result.status < 500) {
        const body = omitFields(result.body ?? null, route.replayOmits ?? []);
        await store.putIdempotent({ scope, requestHash, status: result.status, body, createdAt: new Date().toISOString() });
      }
      return result;
    } finally {
      this.inProgress.delete(scope);
    }
  }
}

type Authenticated = { apiKey: ApiKeyRecord | null; session: SessionRecord | null; doorUser: string | null };
const NOBODY: Authenticated = { apiKey: null, session: null, doorUser: null };

async function authenticate(
  platform: Platform, req: IncomingMessage, route: Route, params: Record<string, string>, at: { door: OAuthDoor | undefined; resourceUrl: string },
): Promise<Authenticated> {
  if (route.auth === 'none') return NOBODY;
  const { door, resourceUrl } = at;
  const header = req.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (route.auth === 'door') {
    if (!door) throw new Error('a door route is in the table only with OAuth at the door on');
    if (!match) throw door.noToken(resourceUrl, 'send "Authorization: Bearer <access token>"');
    return { ...NOBODY, doorUser: await door.admit(match[1], resourceUrl) };
  }
  const wanted = route.auth === 'session' ? 'session token' : 'api key';
  if (!match) {
    if (route.auth === 'session' && door) throw door.noToken(resourceUrl, 'send "Authorization: Bearer <session token>"');
    throw unauthorized(`send "Authorization: Bearer <${wanted}>"`, null);
  }
  const token = match[1];
  if (route.auth === 'session') {
    const session = await platform.sessions.byToken(token);
    if (session && session.id === params.id) return { ...NOBODY, session };
    if (door && looksLikeJwt(token)) return doorSession(platform, door, token, resourceUrl, params.id);
    if (door) throw door.invalid(resourceUrl, 'the bearer token is neither the session token nor an access token');
    throw unauthorized('send "Authorization: Bearer <session token>" (the token the session was created with)', 'the session token is not valid for this session');
  }
  const apiKey = await platform.apiKeys.verify(token);
  if (apiKey) {
    // The one place a key's scope is enforced: every route that takes an API key passes here.
    if (!platform.apiKeys.permits(apiKey, accessOf(route))) {
      throw new HttpError(403, 'read_only_key', `the API key ${apiKey.prefix}… is read-only (scope read): it may only GET; changes take an admin key`);
    }
    return { ...NOBODY, apiKey };
  }
  if (route.auth === 'api_key_or_session') {
    const session = await platform.sessions.byToken(token);
    if (session && session.id === params.id) return { ...NOBODY, session };
  }
  throw unauthorized('the bearer token is not a valid API key', 'the bearer token is not a valid API key');
}

/** A session's endpoint reached with an access token: let in when the token's user is the session's. */
async function doorSession(platform: Platform, door: OAuthDoor, token: string, resourceUrl: string, sessionId: string): Promise<Authenticated> {
  const userId = await door.admit(token, resourceUrl);
  const session = await platform.sessions.liveOfUser(sessionId, userId);
  if (session) return { ...NOBODY, session, doorUser: userId };
  // Whether the session exists or is another user's is not told: either way this user has no such session.
  throw new HttpError(403, 'not_your_session', `user ${userId} has no live session ${sessionId}; its agent's endpoint (/v1/agents/{id}/mcp) opens the user's own`);
}

/** A GET reads; everything else (a tool call included) changes something. */
function accessOf(route: Route): Access {
  return route.method === 'GET' ? 'read' : 'write';
}

/**
 * A 401 that tells the client which token to bring and that no OAuth flow would get one (bearer-challenge.ts).
 * `invalid` is the header's description when a token came and was wrong; null when none came.
 */
function unauthorized(message: string, invalid: string | null): HttpError {
  const challenge = invalid === null ? bearerChallenge({ tokenSent: false }) : bearerChallenge({ tokenSent: true, description: `${invalid}; no OAuth flow is available` });
  return new HttpError(401, 'unauthorized', `${message}; this server has no OAuth flow: the token comes from its API`, undefined, { 'www-authenticate': challenge });
}

function omitFields(body: unknown, fields: string[]): unknown {
  if (fields.length === 0 || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body as Record<string, unknown>).filter(([key]) => !fields.includes(key)));
}

function checkQuery(route: Route, search: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, schema] of Object.entries(route.query ?? {})) {
    const value = search.get(name);
    if (value === null) continue;
    const typed = schema.type === 'integer' ? (/^-?\d{1,15}$/.test(value) ? Number(value) : value) : value;
    const check = checkAgainstSchema(schema, typed, queryParameter(name));
    if (!check.ok) throw new HttpError(400, 'invalid_query', check.problems[0]?.message ?? `query parameter ${name} is invalid`);
    out[name] = value;
  }
  return out;
}

function requireContentType(req: IncomingMessage, accepted: string[]): void {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (!accepted.includes(type)) {
    throw new HttpError(415, 'unsupported_media_type', `send the body as ${accepted.join(' or ')}${type ? ` (got ${type})` : ''}`);
  }
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error; // expected: not JSON
    throw new HttpError(400, 'invalid_json', 'the request body is not valid JSON');
  }
}

export function writeJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (status === 204) {
    res.writeHead(204, headers);
    res.end();
    return;
  }
  const text = JSON.stringify(body ?? null);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
