/** The call log: a call as the API makes it (POST /v1/sessions/{id}/calls) and as every list and the live stream show it. */
import { z } from 'zod';
import { CallApprovalView } from './approvals.js';
import { jsonObject, timestamp } from './shared.js';

export const CallOutcome = z.enum(['running', 'ok', 'tool_error', 'crash', 'cancelled', 'invalid_arguments', 'denied', 'input_required', 'unknown']);
export type CallOutcome = z.infer<typeof CallOutcome>;

export const CallInput = z.strictObject({ tool: z.string().min(1).max(256), arguments: jsonObject.optional() });
export type CallInput = z.infer<typeof CallInput>;

/** Why a call crashed (or, outcome unknown, what cut it off and what to do). */
export const CallCrash = z.object({ reason: z.string(), message: z.string() });
export type CallCrash = z.infer<typeof CallCrash>;

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
  outcome: CallOutcome.describe(
    'unknown: the call was cut off mid-way (the server running it stopped or lost its lease before its end was recorded, or its '
      + 'worker stopped answering) and whether the tool ran to its end is not known; crash.reason is interrupted and crash.message says what to do.',
  ),
  crash: CallCrash.nullable(),
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
  lease_lapsed: z.object({
    marked_as: z.object({ outcome: CallOutcome, crash: CallCrash.nullable() }).nullable()
      .describe('What another server marked the call as while the lease was lapsed (unknown), or null when none had.'),
    note: z.string().describe('The same, in a sentence for people.'),
  }).optional().describe(
    "Present when the call's end was written after the lease of the server running it had lapsed (the database out of its reach for "
      + 'longer than the lease): the record holds the outcome the call really had, and marked_as what another server marked it meanwhile (or null).',
  ),
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

export const CallAnswer = z.object({
  call: CallView,
  result: CallResult.describe('The CallToolResult the model would see.'),
  replayed: z.boolean().optional().describe(
    "true when this answers a retry with the same Idempotency-Key: the first call's record and result; nothing ran again.",
  ),
  end_pending: z.boolean().optional().describe(
    "true when the database could not take the call's end: the server holds it and writes it once the database is back (the call log "
      + "shows the call running until then). The result is the call's own.",
  ),
});
export type CallAnswer = z.infer<typeof CallAnswer>;

/** One tool's or agent's calls in a stats window. */
export const CallStatsRowView = z.object({
  key: z.string().describe('The tool (its published name) or the agent id.'),
  calls: z.int(),
  errors: z.int().describe('Calls that ended tool_error, crash, unknown or invalid_arguments.'),
  p50_ms: z.int().nullable().describe('The median duration of the calls that ended (nearest rank); null when none has.'),
  p95_ms: z.int().nullable().describe('The 95th percentile duration of the calls that ended (nearest rank); null when none has.'),
});
export type CallStatsRowView = z.infer<typeof CallStatsRowView>;

export const CallStatsWindowName = z.enum(['hour', 'day']);
export type CallStatsWindowName = z.infer<typeof CallStatsWindowName>;

/** GET /v1/calls/stats: the call log over the last hour (by minute) or day (by hour). */
export const CallStatsView = z.object({
  window: CallStatsWindowName,
  since: timestamp.describe('The start of the first bucket.'),
  until: timestamp.describe('Now, as the server counted.'),
  bucket_seconds: z.int().describe('60 for the hour, 3600 for the day.'),
  buckets: z.array(z.object({ start: timestamp, calls: z.int(), errors: z.int() })).describe('Every bucket of the window, oldest first, empty ones as zeros.'),
  by_tool: z.array(CallStatsRowView).describe('Most calls first.'),
  by_agent: z.array(CallStatsRowView).describe('Most calls first.'),
});
export type CallStatsView = z.infer<typeof CallStatsView>;
