/**
 * The 2025-03-26 revision's last resort: a server that publishes neither protected resource metadata nor
 * authorization server metadata is its own authorization server, at the default paths `/authorize`, `/token`
 * and `/register` of the MCP server's origin (that revision's "Fallbacks for Servers without Metadata
 * Discovery"). Later revisions dropped this; subako keeps it only for servers that offer nothing else.
 */
import type { AuthorizationServerMetadata } from '@modelcontextprotocol/client';

/** The metadata such a server implies: the three default endpoints at its origin, PKCE S256, the code flow. */
export function legacyEndpoints(serverUrl: URL): AuthorizationServerMetadata {
  const origin = serverUrl.origin;
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
  } as AuthorizationServerMetadata;
}
