/**
 * Capability URLs: `/<prefix>/<token>` where the token (256 random bits, base64url) is the only credential.
 * A router maps live tokens to web-standard handlers; a revoked or unknown token gets the same 404, so the
 * router is no oracle. Tokens never reach a log line: request paths are logged with the token replaced.
 *
 * The router adapts Node's `(req, res)` to the handlers, so one router can be mounted in any node:http
 * server (serve's own loopback server, or a host's server that forwards the prefix to it).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { DEFAULT_MAX_BODY_BYTES } from './endpoint-admission.js';

export type WebHandler = (request: Request) => Promise<Response>;
type NodeHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;
/** A web handler that also answers node:http directly (a ToolboxHandler); the router then uses that face. */
export type RoutableHandler = WebHandler & { handleNode?: NodeHandler };

export interface CapabilityRouterOptions {
  /** Path prefix the router owns (default `/mcp/`). */
  prefix?: string;
  /** Receives one line per request, token redacted: `mcp <label> POST /mcp/******** 200`. */
  log?: (line: string) => void;
  /** Largest request body a plain web handler (one without `handleNode`) is given, in bytes (default 4 MiB). */
  maxBodyBytes?: number;
}

export interface Capability {
  /** The path to publish, secret included: `/mcp/<token>`. */
  readonly path: string;
  /** A label for logs that says nothing about the token. */
  readonly label: string;
  /** Ends the capability: from now on its path answers 404. Idempotent. */
  revoke(): void;
}

/** Bits of randomness in a token; the spec asks for an unguessable URL (at least 128 bits). */
export const TOKEN_BYTES = 32;

export function mintToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

interface Route {
  label: string;
  node: NodeHandler;
}

function notFound(res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Not found' } }));
}

export class CapabilityRouter {
  readonly prefix: string;
  readonly #routes = new Map<string, Route>();
  readonly #log: (line: string) => void;
  readonly #maxBodyBytes: number;
  #minted = 0;

  constructor(options: CapabilityRouterOptions = {}) {
    const prefix = options.prefix ?? '/mcp/';
    this.prefix = prefix.endsWith('/') ? prefix : `${prefix}/`;
    this.#log = options.log ?? (() => undefined);
    this.#maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  }

  /** Number of live capabilities. */
  get size(): number {
    return this.#routes.size;
  }

  mint(handler: RoutableHandler): Capability {
    const token = mintToken();
    this.#minted += 1;
    const label = `cap-${this.#minted}`;
    const node: NodeHandler =
      handler.handleNode ?? toNodeHandler({ fetch: (request: Request) => handler(request) }, { maxRequestBodySize: this.#maxBodyBytes });
    this.#routes.set(token, { label, node });
    return {
      path: `${this.prefix}${token}`,
      label,
      revoke: () => {
        this.#routes.delete(token);
      },
    };
  }

  /** Whether a request path falls under the router's prefix (then the router answers it, 404 included). */
  owns(url: string | undefined): boolean {
    return (url ?? '').startsWith(this.prefix);
  }

  /** Answers a request under the prefix; returns false (and does nothing) for any other path. */
  async handleNode(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    if (!this.owns(req.url)) return false;
    const pathname = (req.url ?? '').split('?')[0];
    const token = pathname.slice(this.prefix.length);
    const route = this.#routes.get(token);
    const logged = `${this.prefix}********`;
    res.once('finish', () => this.#log(`mcp ${route?.label ?? '-'} ${req.method ?? '?'} ${logged} ${res.statusCode}`));
    if (!route) {
      req.resume();
      notFound(res);
      return true;
    }
    // The body's size is checked once, by the route: a ToolboxHandler's gate, or the SDK's adapter's bound.
    await route.node(req, res);
    return true;
  }
}

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;
const attached = new WeakMap<HttpServer, CapabilityRouter>();

/**
 * The router mounted in an existing node:http server, mounted on first use: requests under the router's
 * prefix go to it, every other request to the listeners the server had. Mount after the server has its own
 * request handler (a listener added later would also see the capability requests).
 */
export function routerFor(server: HttpServer, options: CapabilityRouterOptions = {}): CapabilityRouter {
  const existing = attached.get(server);
  if (existing) return existing;
  const router = new CapabilityRouter(options);
  const previous = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (router.owns(req.url)) {
      router.handleNode(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
      return;
    }
    for (const listener of previous) listener.call(server, req, res);
  });
  attached.set(server, router);
  return router;
}
