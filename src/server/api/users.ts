/** /v1/users: end users, as the operator's application names them; each owns vaults and has sessions. */
import { z } from 'zod';
import { timestamp } from './shared.js';

const displayField = z.string().max(256);

export const UserInput = z.strictObject({
  id: z.string().min(1).max(128).describe(
    'The user\'s id, chosen by your application (its account id, an identity provider\'s subject): 1-128 characters of ' +
    'A-Z a-z 0-9 and . _ - @ : | + =, beginning with a letter or digit. It cannot be changed.',
  ),
  display_name: displayField.nullable().optional(),
  email: displayField.nullable().optional().describe('Shown only; subako sends nothing to it.'),
});
export type UserInput = z.infer<typeof UserInput>;

export const UserUpdateInput = z.strictObject({
  display_name: displayField.nullable().optional(),
  email: displayField.nullable().optional(),
}).describe('The user\'s fields, replaced whole: a field left out (or null) is cleared.');
export type UserUpdateInput = z.infer<typeof UserUpdateInput>;

export const UserView = z.object({
  id: z.string(), display_name: z.string().nullable(), email: z.string().nullable(), created_at: timestamp, updated_at: timestamp,
});
export type UserView = z.infer<typeof UserView>;

/** A connection the user made themselves (an OAuth grant held by subako): never its tokens. */
export const ConnectionView = z.object({
  id: z.string(),
  name: z.string().describe('The connection\'s name in the agents that declare it.'),
  kind: z.enum(['mcp', 'egress']).describe('mcp: the token goes only to that remote MCP server; egress: to the origin\'s requests of the user\'s sessions.'),
  target: z.string().describe('The remote MCP server\'s URL, or the egress origin.'),
  authorization_server: z.string(),
  status: z.enum(['connected', 'expired']).describe('expired: the access token ran out and there is no refresh token; the next call that needs it asks the user to connect again.'),
  scopes: z.array(z.string()),
  expires_at: z.string().nullable().describe('When the current access token expires (it is refreshed before then when it can be).'),
  refreshable: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ConnectionView = z.infer<typeof ConnectionView>;

export const DisconnectedView = z.object({
  revoked: z.boolean().describe('Whether the authorization server acknowledged revoking the tokens (RFC 7009).'),
  revocation: z.string().describe('What happened at the authorization server.'),
});
export type DisconnectedView = z.infer<typeof DisconnectedView>;
