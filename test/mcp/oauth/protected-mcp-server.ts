/**
 * An MCP server (official v2 SDK) that requires an OAuth bearer token from TestAuthServer: it serves its
 * RFC 9728 protected resource metadata, answers a request without a valid token with 401 and a
 * `WWW-Authenticate` challenge naming that metadata, and accepts only unexpired tokens issued for its own
 * URL as the resource (RFC 8707). Its one tool, `whoami`, answers with the token's client id. It asks whichever
 * authorization server `authServer` names at the time (a test can move it to another), or, with
 * `authorizationAtOrigin`, is a 2025-03-26 server: no resource metadata, a bare 401 challenge, and the authorization
 * server's endpoints on its own origin.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  buildOAuthProtectedResourceMetadata,
  createMcpHandler,
  getOAuthProtectedResourceMetadataUrl,
  inputRequired,
  McpServer,
  OAuthError,
  OAuthErrorCode,
  oauthMetadataResponse,
  requireBearerAuth,
  type OAuthMetadata,
} from '@modelcontextprotocol/server';
import * as z from 'zod';
import { mcp } from '../../../src/mcp/index.js';
import { TestAuthServer, type AuthServerOptions } from './auth-server.js';

/** What the server asks of its authorization server: its metadata, token introspection, and (at its origin) requests. */
export type AuthorizationServerView = Pick<TestAuthServer, 'metadata' | 'introspect' | 'serve' | 'adoptOrigin'>;

export interface ProtectedMcpServer {
  url: string;
  /** How many MCP requests came with a token the server accepted. */
  authorizedRequests: number;
  /** Every accepted request's token and its subject (who consented at the authorization server), in order. */
  seen: { token: string; subject: string }[];
  close(): Promise<void>;
}

export interface ProtectedMcpServerOptions {
  /**
   * Where the protected resource metadata is: at the RFC 9728 well-known location (default), or only at
   * a private path that nothing but the 401 challenge's `resource_metadata` names.
   */
  metadata?: 'well-known' | 'challenge-only';
  /**
   * Adds a tool `report` whose calls need this scope besides a valid token: without it a `tools/call` of
   * `report` is answered 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` (the scopes
   * the token has plus this one), which a client answers by stepping up.
   */
  reportScope?: string;
  /** Adds a tool `confirm` that always asks the client for input (an elicitation, `input_required`). */
  confirmTool?: boolean;
  /**
   * A 2025-03-26 server: no protected resource metadata, a 401 without `resource_metadata`, and every path but
   * the MCP endpoint answered by the authorization server, which takes this server's origin as its own.
   */
  authorizationAtOrigin?: boolean;
  /**
   * Lets anyone list (every request but `tools/call` passes without a token), as servers that show their tools before
   * sign-in do; calls still need a valid token. Adds a tool `me` answering the token's subject.
   */
  openListing?: boolean;
}

export async function startProtectedMcpServer(authServer: AuthorizationServerView, options: ProtectedMcpServerOptions = {}): Promise<ProtectedMcpServer> {
  const handler = createMcpHandler(({ authInfo }) => {
    const server = new McpServer({ name: 'protected', version: '1.0.0' });
    server.registerTool(
      'whoami',
      { description: 'Says which OAuth client is calling.', inputSchema: z.object({}), outputSchema: z.object({ clientId: z.string() }) },
      async () => {
        const clientId = authInfo?.clientId ?? 'nobody';
        return { content: [{ type: 'text', text: clientId }], structuredContent: { clientId } };
      },
    );
    if (options.openListing) {
      server.registerTool(
        'me',
        { description: 'Says whose account the token is for.', inputSchema: z.object({}), outputSchema: z.object({ subject: z.string() }) },
        async () => {
          const subject = String((authInfo?.extra as { subject?: unknown } | undefined)?.subject ?? 'nobody');
          return { content: [{ type: 'text', text: subject }], structuredContent: { subject } };
        },
      );
    }
    if (options.reportScope !== undefined) {
      server.registerTool('report', { description: 'Needs an extra scope.', inputSchema: z.object({}) }, async () => ({
        content: [{ type: 'text', text: 'the report' }],
      }));
    }
    if (options.confirmTool) {
      server.registerTool('confirm', { description: 'Asks a person first.', inputSchema: z.object({}) }, async () =>
        inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({ message: 'Really?', requestedSchema: z.object({ confirm: z.boolean() }) }),
          },
        }),
      );
    }
    return server;
  });

  let node: Server | undefined;
  const state: ProtectedMcpServer = {
    url: '',
    authorizedRequests: 0,
    seen: [],
    close: () =>
      new Promise<void>((resolve) => {
        if (node === undefined) return resolve();
        node.close(() => resolve());
        node.closeAllConnections();
      }),
  };

  let serverUrl: URL | undefined;
  const fetchHandler = async (request: Request): Promise<Response> => {
    const metadataOptions = {
      oauthMetadata: authServer.metadata() as unknown as OAuthMetadata,
      resourceServerUrl: serverUrl!,
      scopesSupported: ['tools:read', 'tools:call'],
      dangerouslyAllowInsecureIssuerUrl: true,
    };
    const challengeOnly = options.metadata === 'challenge-only';
    const privateMetadataUrl = new URL('/private/resource-metadata', serverUrl);
    if (challengeOnly && new URL(request.url).pathname === privateMetadataUrl.pathname) {
      return Response.json(buildOAuthProtectedResourceMetadata(metadataOptions));
    }
    const atOrigin = options.authorizationAtOrigin === true;
    const document = challengeOnly || atOrigin ? undefined : oauthMetadataResponse(request, metadataOptions);
    if (document !== undefined) return document;
    const gate = requireBearerAuth({
      verifier: {
        verifyAccessToken: async (token) => {
          const issued = authServer.introspect(token);
          if (issued === undefined) throw new OAuthError(OAuthErrorCode.InvalidToken, 'unknown or expired token');
          return {
            token, clientId: issued.clientId, scopes: issued.scope?.split(' ') ?? [], expiresAt: issued.expiresAt, resource: new URL(issued.resource),
            extra: { subject: issued.subject },
          };
        },
      },
      expectedResource: serverUrl!,
      ...(atOrigin ? {} : { resourceMetadataUrl: challengeOnly ? privateMetadataUrl.href : getOAuthProtectedResourceMetadataUrl(serverUrl!) }),
    });
    if (options.openListing && request.method === 'POST' && !request.headers.get('authorization') && !(await callsAnyTool(request))) {
      return handler.fetch(request, {});
    }
    const authInfo = await gate(request);
    if (authInfo instanceof Response) return authInfo;
    state.seen.push({ token: authInfo.token, subject: String((authInfo.extra as { subject?: unknown } | undefined)?.subject) });
    if (options.reportScope !== undefined && !authInfo.scopes.includes(options.reportScope) && (await callsTool(request, 'report'))) {
      const wanted = [...authInfo.scopes, options.reportScope].join(' ');
      return Response.json(
        { error: 'insufficient_scope', error_description: `report needs ${options.reportScope}` },
        {
          status: 403,
          headers: {
            'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${wanted}", resource_metadata="${getOAuthProtectedResourceMetadataUrl(serverUrl!)}"`,
          },
        },
      );
    }
    state.authorizedRequests += 1;
    return handler.fetch(request, { authInfo });
  };

  const mcpHandler = toNodeHandler({ fetch: fetchHandler });
  node = createServer((req, res) => {
    if (options.authorizationAtOrigin === true && new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') return authServer.serve(req, res);
    return mcpHandler(req, res);
  });
  await new Promise<void>((resolve) => node!.listen(0, '127.0.0.1', resolve));
  serverUrl = new URL(`http://127.0.0.1:${(node.address() as AddressInfo).port}/mcp`);
  if (options.authorizationAtOrigin === true) authServer.adoptOrigin(serverUrl.origin);
  state.url = serverUrl.href;
  return state;
}

async function callsAnyTool(request: Request): Promise<boolean> {
  const body = (await request.clone().json().catch(() => undefined)) as { method?: unknown } | undefined;
  return body?.method === 'tools/call';
}

async function callsTool(request: Request, name: string): Promise<boolean> {
  if (request.method !== 'POST') return false;
  const body = (await request.clone().json().catch(() => undefined)) as { method?: unknown; params?: { name?: unknown } } | undefined;
  return body?.method === 'tools/call' && body.params?.name === name;
}

/**
 * A TestAuthServer with `options` and a protected MCP server on it, for `body`; both closed after it, with the
 * connections the MCP client kept.
 */
export async function withProtectedServers(
  options: AuthServerOptions,
  body: (authServer: TestAuthServer, server: ProtectedMcpServer) => Promise<void>,
  serverOptions: ProtectedMcpServerOptions = {},
): Promise<void> {
  const authServer = await new TestAuthServer(options).start();
  const mcpServer = await startProtectedMcpServer(authServer, serverOptions);
  try {
    await body(authServer, mcpServer);
  } finally {
    await mcp.close();
    await mcpServer.close();
    await authServer.close();
  }
}
