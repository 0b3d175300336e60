/** /v1/vaults: vaults and their credentials — written whole, never shown: a credential's view has no secret. */
import { z } from 'zod';
import { timestamp } from './shared.js';

export const VaultInput = z.strictObject({ name: z.string().min(1).max(128) });
export type VaultInput = z.infer<typeof VaultInput>;

export const VaultView = z.object({
  id: z.string(), name: z.string(),
  user_id: z.string().nullable().describe('The user who owns the vault (only that user\'s sessions use it), or null: the operator\'s.'),
  created_at: timestamp,
});
export type VaultView = z.infer<typeof VaultView>;

const headerValue = z.string().min(1).max(8192);

/** A credential's secret, by scheme: a bearer token, static headers, or OAuth tokens with what refreshes them. */
export const CredentialPayload = z.discriminatedUnion('auth_scheme', [
  z.strictObject({ auth_scheme: z.literal('static_bearer'), token: headerValue }),
  z.strictObject({
    auth_scheme: z.literal('static_headers'),
    // The member count is a JSON Schema keyword (the router's check); the type is a record either way.
    headers: z.record(z.string(), headerValue).meta({ minProperties: 1, maxProperties: 32 }),
  }),
  z.strictObject({
    auth_scheme: z.literal('oauth'),
    access_token: headerValue,
    expires_at: z.string().max(64).optional(),
    refresh: z.strictObject({
      token_endpoint: z.string().min(1).max(2048),
      client_id: z.string().min(1).max(512),
      client_secret: z.string().max(2048).optional(),
      scope: z.string().max(2048).optional(),
      refresh_token: z.string().min(1).max(8192),
      token_endpoint_auth: z.enum(['none', 'client_secret_basic', 'client_secret_post']).optional(),
    }).optional(),
  }),
]);
export type CredentialPayload = z.infer<typeof CredentialPayload>;

export const CredentialInput = z.strictObject({
  target: z.string().min(1).max(2048),
  display_name: z.string().max(256).optional(),
  payload: CredentialPayload,
});
export type CredentialInput = z.infer<typeof CredentialInput>;

export const CredentialView = z.object({
  id: z.string(), vault_id: z.string(), target: z.string(), display_name: z.string(),
  auth_scheme: z.enum(['static_headers', 'static_bearer', 'oauth']),
  expires_at: timestamp.nullable(), refreshable: z.boolean(), created_at: timestamp, updated_at: timestamp,
});
export type CredentialView = z.infer<typeof CredentialView>;
