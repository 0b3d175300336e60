/** The call log: a call as the API makes it (POST /v1/sessions/{id}/calls) and as every list and the live stream show it. */
import { z } from 'zod';
import { CallApprovalView } from './approvals.js';
import { jsonObject, timestamp } from './shared.js';

export const CallOutcome = z.enum(['running', 'ok', 'tool_error', 'crash', 'cancelled', 'invalid_arguments', 'denied', 'input_required']);
export type CallOutcome = z.infer<typeof CallOutcome>;

export const CallInput = z.strictObject({ tool: z.string().min(1).max(256), arguments: jsonObject.optional() });
export type CallInput = z.infer<typeof CallInput>;

/** One HTTP request a guest made (subako_http), as its call's record keeps it. */
export const EgressView = z.object({
  method: z.string(),
  url: z.string(),
  status: z.int().optional(),
  error: z.string().optional(),
  bytesIn: z.int(),
  bytesOut: z.int(),
  durationMs: z.int(),
});
export type EgressView = z.infer<typeof EgressView>;

export const CallView = z.object({
  id: z.string(),
  session_id: z.string(),
  via: z.enum(['api', 'mcp', 'library']),
  tool: z.string(),
  arguments: z.unknown(),
  outcome: CallOutcome,
  crash: z.object({ reason: z.string(), message: z.string() }).nullable(),
  model: z.array(z.unknown()).describe('The content blocks the model saw.'),
  stderr_tail: z.string(),
  egress: z.array(EgressView),
  duration_ms: z.int().nullable(),
  started_at: timestamp,
  worker: z.object({ id: z.string(), host: z.string() }).nullable().describe(
    'The worker of the fleet that ran the call (scale-out): its id and the host it runs on, as it said when it took the call. '
      + "null for a call that ran in the server's own sandbox, a remote MCP or TypeScript tool, a call no worker took, and one still running.",
  ),
  approval: CallApprovalView.optional(),
  traceparent: z.string().optional().describe('The W3C trace context the request that made the call carried (MCP `_meta.traceparent`), when a valid one.'),
});
export type CallView = z.infer<typeof CallView>;

/** A call where the answer spans sessions (the calls search and the live stream): with its agent. */
export const AgentCallView = CallView.extend({ agent_id: z.string() });
export type AgentCallView = z.infer<typeof AgentCallView>;

/** One MCP content block (`text`, `image`, `resource_link`, …). */
export const ContentBlock = z.looseObject({ type: z.string() });
export type ContentBlock = z.infer<typeof ContentBlock>;

/** An MCP CallToolResult: what the model reads of a call. */
export const CallResult = z.object({
  content: z.array(ContentBlock),
  structuredContent: jsonObject.optional(),
  isError: z.boolean().optional(),
  _meta: jsonObject.optional(),
});
export type CallResult = z.infer<typeof CallResult>;

export const CallAnswer = z.object({ call: CallView, result: CallResult.describe('The CallToolResult the model would see.') });
export type CallAnswer = z.infer<typeof CallAnswer>;
