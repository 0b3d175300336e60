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
