/** /v1/sessions: a session as the API starts it and shows it, its tools, and the files of its /volume/tmp. */
import { z } from 'zod';
import { jsonObject, timestamp } from './shared.js';

export const SessionInput = z.strictObject({
  vault_ids: z.array(z.string().min(1).max(64)).max(16).optional(),
  ttl_seconds: z.int().min(1).max(30 * 24 * 3600).optional(),
  user_id: z.string().min(1).max(128).describe(
    'The end user the session acts for. Its vaults are then that user\'s: those named in vault_ids (the user\'s own, or ' +
    'the operator\'s), or, with none named, every vault the user owns at the time of each call. Never another user\'s.',
  ).optional(),
});
export type SessionInput = z.infer<typeof SessionInput>;

export const SessionView = z.object({
  id: z.string(), agent_id: z.string(), agent_version: z.int(), vault_ids: z.array(z.string()),
  user_id: z.string().nullable().describe('The end user the session acts for, or null.'),
  created_at: timestamp, expires_at: timestamp,
});
export type SessionView = z.infer<typeof SessionView>;

/** The two ways to reach a session's MCP endpoint. */
export const SessionEndpoints = z.object({ capability_url: z.string(), url: z.string(), authorization: z.string() });
export type SessionEndpoints = z.infer<typeof SessionEndpoints>;

/** A session as its creation answers it: with its token and MCP endpoint, shown this once (an Idempotency-Key replay answers without them). */
export const CreatedSessionView = SessionView.extend({
  token: z.string().describe('Shown once, at creation: opens the MCP endpoint and the session\'s call routes.').optional(),
  mcp: SessionEndpoints.optional(),
});
export type CreatedSessionView = z.infer<typeof CreatedSessionView>;

/** A tool of a session's toolbox, under its published name. */
export const SessionTool = z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: jsonObject,
  outputSchema: jsonObject.optional(),
  annotations: jsonObject.optional().describe('The source\'s hints (readOnlyHint, destructiveHint, idempotentHint, openWorldHint, title), as it gave them.'),
  icons: z.array(jsonObject).optional(),
  source: z.looseObject({ kind: z.string() }).describe('Where the tool comes from; a remote MCP server\'s URL is shown as its origin only.').optional(),
  requires_approval: z.literal(true).describe('Each call waits for a person\'s approval (policy require_approval or require_user_approval).').optional(),
});
export type SessionTool = z.infer<typeof SessionTool>;

export const SessionTools = z.object({
  items: z.array(SessionTool),
  warnings: z.array(z.string()).optional(),
  withheld: z.array(z.object({ name: z.string(), reason: z.string() })).describe(
    'Tools not served: a pinned remote tool whose server now lists a changed definition (a call is refused with the reason).',
  ).optional(),
  listed: z.array(z.string()).describe('With discovery search: the names tools/list shows (the others are found with search_tools).').optional(),
});
export type SessionTools = z.infer<typeof SessionTools>;

export const FileEntry = z.object({ name: z.string(), kind: z.enum(['file', 'directory', 'link', 'other']), size: z.int() });
export type FileEntry = z.infer<typeof FileEntry>;

export const FileListing = z.object({ path: z.string(), entries: z.array(FileEntry), truncated: z.boolean() });
export type FileListing = z.infer<typeof FileListing>;
