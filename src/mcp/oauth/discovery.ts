/**
 * OAuth discovery for an MCP server, the part every OAuth flow subako runs shares (the CLI's `login`, and any
 * flow the platform runs as a client): an unauthenticated probe whose 401/403 challenge names the protected
 * resource metadata and scopes (RFC 9728), the authorization server's metadata (RFC 8414 with the OpenID
 * Connect fallback), and the RFC 8707 resource indicator to ask for. A server that challenges but publishes no
 * metadata at all is a 2025-03-26 one: its origin's default endpoints are used (legacy-endpoints.ts).
 */
import {
  checkResourceAllowed,
  discoverOAuthServerInfo,
  extractWWWAuthenticateParams,
  resourceUrlFromServerUrl,
  type FetchLike,
  type OAuthProtectedResourceMetadata,
} from '@modelcontextprotocol/client';
import { SUBAKO_VERSION } from '../../version.js';
import { LoginError } from './errors.js';
import { legacyEndpoints } from './legacy-endpoints.js';

/** What a 401/403 challenge said: where the resource metadata is and which scopes the server wants. */
export interface ResourceChallenge {
  resourceMetadataUrl?: URL;
  scope?: string;
  /** True when the server answered 401 or 403: it wants a token, whatever else it said. */
  challenged?: boolean;
}

export interface DiscoverOptions {
  /**
   * Where neither protected resource metadata nor authorization server metadata exists, use the 2025-03-26
   * default endpoints at the server's origin instead of failing. Only for a server known to want a token
   * (its probe was challenged): otherwise "no metadata" more likely means "no OAuth".
   */
  legacyFallback?: boolean;
}

export function parseServerUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a URL
    throw new LoginError('discovery', `"${url}" is not a URL`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new LoginError('discovery', `an MCP server URL is http(s), not ${parsed.protocol}`);
  }
  return parsed;
}

/** Step 1: an unauthenticated request; a 401/403 challenge may name the resource metadata and scopes. */
export async function probe(serverUrl: URL, fetchFn: FetchLike): Promise<ResourceChallenge> {
  let response: Response;
  try {
    response = await fetchFn(serverUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'server/discover',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'server/discover',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'subako', version: SUBAKO_VERSION },
          },
        },
      }),
    });
  } catch (err) {
    throw new LoginError('discovery', `could not reach the MCP server at ${serverUrl.href}: ${messageOf(err)}`, { cause: err });
  }
  await response.body?.cancel().catch(() => undefined); // a body we do not read: only the status and headers matter
  if (response.status !== 401 && response.status !== 403) return {};
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
  return { challenged: true, ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) };
}

/**
 * Steps 1–2: protected resource metadata, then the authorization server's metadata. Without protected resource
 * metadata the server's origin is the authorization server (the SDK tries its well-known metadata there); with
 * `legacyFallback` and no metadata there either, its default endpoints. `legacyEndpoints` says which happened.
 */
export async function discover(serverUrl: URL, resourceMetadataUrl: URL | undefined, fetchFn: FetchLike, options: DiscoverOptions = {}) {
  let info;
  try {
    info = await discoverOAuthServerInfo(serverUrl, { resourceMetadataUrl, fetchFn });
  } catch (err) {
    throw new LoginError('discovery', `OAuth discovery for ${serverUrl.href} failed: ${messageOf(err)}`, { cause: err });
  }
  const metadata = info.authorizationServerMetadata;
  if (metadata === undefined && info.resourceMetadata === undefined && options.legacyFallback === true) {
    const legacy = legacyEndpoints(serverUrl);
    return { ...info, authorizationServerUrl: legacy.issuer, authorizationServerMetadata: legacy, legacyEndpoints: true };
  }
  if (metadata === undefined) {
    throw new LoginError(
      'discovery',
      `no authorization server metadata was found for ${serverUrl.href} (tried ${info.authorizationServerUrl}); the server may not use OAuth`,
    );
  }
  return { ...info, authorizationServerMetadata: metadata, legacyEndpoints: false };
}

/**
 * The RFC 8707 resource indicator: the metadata's `resource` when it covers the server URL (sent verbatim),
 * else the server URL itself without its fragment.
 */
export function resourceFor(serverUrl: URL, metadata: OAuthProtectedResourceMetadata | undefined): string {
  if (metadata === undefined) return resourceUrlFromServerUrl(serverUrl).href;
  if (!checkResourceAllowed({ requestedResource: serverUrl, configuredResource: metadata.resource })) {
    throw new LoginError(
      'discovery',
      `the protected resource metadata is for ${metadata.resource}, which does not cover ${serverUrl.href}; refusing to use it`,
    );
  }
  return metadata.resource;
}

export function messageOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
