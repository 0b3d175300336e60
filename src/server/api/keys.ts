/** /v1/keys: API keys. A key's secret is in the answer that makes it and nowhere else. */
import { z } from 'zod';
import { timestamp } from './shared.js';

export const ApiKeyScope = z.enum(['admin', 'read']);
export type ApiKeyScope = z.infer<typeof ApiKeyScope>;

export const KeyInput = z.strictObject({
  name: z.string().min(1).max(200).describe('What the key is for (e.g. "prometheus").'),
  scope: ApiKeyScope.describe('admin (anything) or read (GET requests only); default admin.').optional(),
});
export type KeyInput = z.infer<typeof KeyInput>;

export const KeyView = z.object({
  id: z.string(), name: z.string(), prefix: z.string().describe('The first characters of the key, to tell keys apart.'),
  scope: ApiKeyScope, created_at: timestamp, last_used_at: timestamp.nullable(), revoked_at: timestamp.nullable(),
});
export type KeyView = z.infer<typeof KeyView>;

/** A key as its creation answers it: `key` is the secret, shown this once (an Idempotency-Key replay answers without it). */
export const CreatedKeyView = KeyView.extend({ key: z.string().optional() });
export type CreatedKeyView = z.infer<typeof CreatedKeyView>;
