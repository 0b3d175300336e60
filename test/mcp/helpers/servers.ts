/**
 * Real MCP servers on loopback for the tests, built with the official SDKs:
 * - `startModernServer`: the v2 server SDK (`createMcpHandler`, 2026-07-28 stateless, 2025 clients too);
 * - `startLegacyServer`: the v1 SDK (`@modelcontextprotocol/sdk`) with a sessionful
 *   StreamableHTTPServerTransport, as 2025-era servers are deployed; it can be restarted on the same port.
 * Both serve the same tools and count what reaches them.
 */
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Server as ModernServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createToolboxHandler } from '../../../src/mcp/toolbox-handler.js';
import type { Toolbox } from '../../../src/tool.js';
import { Server as LegacyServer } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** One tiny PNG pixel, base64. */
export const PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

export const TEST_TOOLS = [
  {
    name: 'add',
    description: 'Adds two integers.',
    inputSchema: {
      type: 'object',
      properties: { x: { type: 'integer', description: 'first' }, y: { type: 'integer' } },
      required: ['x', 'y'],
      additionalProperties: false,
    },
    outputSchema: { type: 'object', properties: { sum: { type: 'integer' } }, required: ['sum'] },
  },
  {
    name: 'pixel',
    description: 'Returns an image.',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'fail',
    description: 'Always reports a tool error.',
    inputSchema: { type: 'object', properties: { reason: { type: 'string' } } },
  },
  {
    name: 'whoami',
    description: 'Says which Authorization header arrived (for auth tests).',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'echo_auth_error',
    description: 'Fails with a JSON-RPC error quoting the request headers (a careless server).',
    inputSchema: { type: 'object', properties: {} },
  },
];

export interface ServerStats {
  /** HTTP requests that reached the server. */
  http: number;
  /** tools/call requests the server handled. */
  calls: number;
  /** tools/list pages the server served. */
  listPages: number;
  /** Legacy `initialize` handshakes. */
  initializes: number;
  /** Authorization header values seen, in order. */
  authorizations: string[];
  /** Requests that declared the 2026-07-28 revision (MCP-Protocol-Version header). */
  modernRequests: number;
}

function newStats(): ServerStats {
  return { http: 0, calls: 0, listPages: 0, initializes: 0, authorizations: [], modernRequests: 0 };
}

/** Pages of two tools: every listing needs the cursor to be followed. */
function listPage(cursor: string | undefined): { tools: unknown[]; nextCursor?: string } {
  const offset = cursor === undefined ? 0 : Number(Buffer.from(cursor, 'base64url').toString());
  const tools = TEST_TOOLS.slice(offset, offset + 2);
  const next = offset + 2 < TEST_TOOLS.length ? Buffer.from(String(offset + 2)).toString('base64url') : undefined;
  return next ? { tools, nextCursor: next } : { tools };
}

function callResult(name: string, args: Record<string, unknown>, authorization: string | undefined, headers: IncomingHeaders) {
  switch (name) {
    case 'add': {
      const sum = Number(args.x) + Number(args.y);
      return { content: [{ type: 'text', text: String(sum) }], structuredContent: { sum } };
    }
    case 'pixel':
      return { content: [{ type: 'image', data: PIXEL_PNG, mimeType: 'image/png' }, { type: 'text', text: 'one pixel' }] };
    case 'fail':
      return { content: [{ type: 'text', text: `failed: ${String(args.reason ?? 'always')}` }], isError: true };
    case 'whoami':
      return { content: [{ type: 'text', text: authorization ?? '(none)' }] };
    case 'echo_auth_error':
      throw new Error(`refused; you sent ${JSON.stringify(headers)}`);
    default:
      throw new Error(`Unknown tool: ${name}`);
  }
}

type IncomingHeaders = Record<string, string | string[] | undefined>;

export interface RunningServer {
  url: string;
  stats: ServerStats;
  /** Drops every open connection and stops listening. */
  stop(): Promise<void>;
  /** Starts again on the same port with no memory of sessions. */
  restart(): Promise<void>;
}

async function listen(server: HttpServer, port = 0): Promise<number> {
  // Node closes an idle keep-alive socket after 5 s; a CLI process on a loaded machine can pause longer than that
  // between two requests on one socket, and its next request then meets the close (ECONNRESET / UND_ERR_SOCKET: the
  // keep-alive race every HTTP client has). These servers keep idle sockets for as long as a test file may run.
  server.keepAliveTimeout = 10 * 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

async function close(server: HttpServer): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export interface ServerOptions {
  /** Answer 401 unless the Authorization header equals this. */
  requireAuthorization?: string;
}

function refuseUnauthorized(req: IncomingMessage, res: ServerResponse, options: ServerOptions): boolean {
  if (options.requireAuthorization === undefined || req.headers.authorization === options.requireAuthorization) return false;
  req.resume();
  res.writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'text/plain' }).end('unauthorized');
  return true;
}

/** The v2 SDK server: 2026-07-28 stateless, and 2025-era clients through its stateless legacy leg. */
export async function startModernServer(options: ServerOptions = {}): Promise<RunningServer> {
  const stats = newStats();
  const handler = createMcpHandler(({ requestInfo }) => {
    const server = new ModernServer({ name: 'modern-test', version: '1.0.0' }, { capabilities: { tools: {} } });
    const authorization = requestInfo?.headers.get('authorization') ?? undefined;
    const headers: Record<string, string> = {};
    requestInfo?.headers.forEach((value, name) => {
      headers[name] = value;
    });
    server.setRequestHandler('tools/list', async (request) => {
      stats.listPages += 1;
      return listPage(request.params?.cursor) as never;
    });
    server.setRequestHandler('tools/call', async (request) => {
      stats.calls += 1;
      return callResult(request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>, authorization, headers) as never;
    });
    return server;
  });
  const node = toNodeHandler(handler);
  const http = createServer((req, res) => {
    stats.http += 1;
    if (req.headers['mcp-protocol-version'] === '2026-07-28') stats.modernRequests += 1;
    if (typeof req.headers.authorization === 'string') stats.authorizations.push(req.headers.authorization);
    if (refuseUnauthorized(req, res, options)) return;
    void node(req, res);
  });
  const port = await listen(http);
  let current = http;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stats,
    stop: () => close(current),
    restart: async () => {
      current = createServer(http.listeners('request')[0] as never);
      await listen(current, port);
    },
  };
}

/** The v1 SDK server with sessions (Mcp-Session-Id), the common 2025-era deployment. */
export async function startLegacyServer(options: ServerOptions = {}): Promise<RunningServer> {
  const stats = newStats();
  let sessions = new Map<string, StreamableHTTPServerTransport>();

  const makeServer = () => {
    const server = new LegacyServer({ name: 'legacy-test', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      stats.listPages += 1;
      return listPage(request.params?.cursor) as never;
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      stats.calls += 1;
      const headers = (extra.requestInfo?.headers ?? {}) as IncomingHeaders;
      const authorization = typeof headers.authorization === 'string' ? headers.authorization : undefined;
      return callResult(request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>, authorization, headers) as never;
    });
    return server;
  };

  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    stats.http += 1;
    if (typeof req.headers.authorization === 'string') stats.authorizations.push(req.headers.authorization);
    if (refuseUnauthorized(req, res, options)) return;
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId !== undefined) {
        req.resume();
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
        return;
      }
      const owned = sessions;
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          stats.initializes += 1;
          owned.set(id, created);
        },
      });
      transport = created;
      await makeServer().connect(transport);
    }
    await transport.handleRequest(req, res);
  };

  let current = createServer((req, res) => void onRequest(req, res));
  const port = await listen(current);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stats,
    stop: async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      await close(current);
    },
    restart: async () => {
      sessions = new Map();
      current = createServer((req, res) => void onRequest(req, res));
      await listen(current, port);
    },
  };
}

/** A toolbox served as a remote MCP server on loopback, by the project's own `createToolboxHandler`; its URL and a stop. */
export async function serveToolbox(toolbox: Toolbox): Promise<{ url: string; stop(): Promise<void> }> {
  const node = toNodeHandler({ fetch: createToolboxHandler(toolbox) });
  const http = createServer((req, res) => { void node(req, res); });
  const port = await listen(http);
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => close(http) };
}

/** A v2 `McpServer` (made per request, as `createMcpHandler` wants) served on loopback; its URL and a stop. */
export async function serveMcpServer(makeServer: () => import('@modelcontextprotocol/server').McpServer): Promise<{ url: string; stop(): Promise<void> }> {
  const node = toNodeHandler(createMcpHandler(makeServer));
  const http = createServer((req, res) => { void node(req, res); });
  const port = await listen(http);
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => close(http) };
}

/**
 * A v2 server whose one tool, `send`, takes any object and answers the arguments it received, as JSON; `received`
 * keeps each call's arguments as they arrived (what approvals tests compare with what an approver was shown).
 */
export async function serveEchoTool(): Promise<{ url: string; received: { tool: string; args: unknown }[]; stop(): Promise<void> }> {
  const received: { tool: string; args: unknown }[] = [];
  const node = toNodeHandler(createMcpHandler(() => {
    const server = new ModernServer({ name: 'mail', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', async () => ({
      tools: [{ name: 'send', description: 'Sends a message; answers the arguments it received.', inputSchema: { type: 'object' } }],
    }) as never);
    server.setRequestHandler('tools/call', async (request) => {
      received.push({ tool: request.params.name, args: request.params.arguments });
      return { content: [{ type: 'text', text: JSON.stringify(request.params.arguments) }] } as never;
    });
    return server;
  }));
  const http = createServer((req, res) => { void node(req, res); });
  const port = await listen(http);
  return { url: `http://127.0.0.1:${port}/mcp`, received, stop: () => close(http) };
}
