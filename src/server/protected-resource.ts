/**
 * RFC 9728 protected resource metadata for the MCP endpoints OAuth at the door protects: where a client learns
 * which authorization server issues tokens for an endpoint, which scopes to ask for, and how to send the token.
 * The document of `https://host/v1/agents/a/mcp` is at `https://host/.well-known/oauth-protected-resource/v1/agents/a/mcp`
 * (§3.1: the well-known segment between the host and the path), and its `resource` is the endpoint's URL itself
 * (§3.3: a client checks the two match). Pure.
 */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** The path templates the door protects, each an MCP endpoint of the route table. */
export const DOOR_PROTECTED_PATHS = ['/v1/agents/{id}/mcp', '/v1/sessions/{id}/mcp'] as const;

export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: string[];
  resource_name: string;
}

/** Where the metadata of the resource at `resourceUrl` is. */
export function metadataUrlOf(resourceUrl: string): string {
  const url = new URL(resourceUrl);
  return `${url.origin}${PROTECTED_RESOURCE_WELL_KNOWN}${url.pathname === '/' ? '' : url.pathname}`;
}

export function protectedResourceMetadata(resourceUrl: string, door: { issuer: string; scopes: readonly string[] }): ProtectedResourceMetadata {
  return {
    resource: resourceUrl,
    authorization_servers: [door.issuer],
    scopes_supported: [...door.scopes],
    // Only the header: a token in a form body or a query would end up in logs (RFC 6750 §5.3).
    bearer_methods_supported: ['header'],
    resource_name: 'subako MCP endpoint',
  };
}
