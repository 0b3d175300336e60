/**
 * Held calls: how a call of a tool that needs approval was asked about and decided (kept in its call record),
 * a held call as its approver reads it, and the decision an operator sends.
 */
import { z } from 'zod';
import { timestamp } from './shared.js';

export const CallApprovalView = z.object({
  id: z.string(),
  asked: z.enum(['elicitation', 'api']),
  decision: z.enum(['pending', 'approved', 'denied', 'expired', 'invalid', 'stopped']),
  decided_by: z.string().nullable().describe('The id of the API key that decided (asked: api).'),
  decided_at: timestamp.nullable(),
  reason: z.string().optional(),
}).describe('Calls of a require_approval or require_user_approval tool: how the call was asked about and decided.');
export type CallApprovalView = z.infer<typeof CallApprovalView>;

/** A held call as its approver reads it: its arguments exactly, vault secrets hidden where hidden_secrets says. */
export const ApprovalView = z.object({
  id: z.string(),
  session_id: z.string(),
  call_id: z.string().describe('The call record that waits for the decision.'),
  tool: z.string(),
  arguments: z.unknown().describe(
    'Exactly the arguments the tool receives once the call is approved, but for values of the session\'s vault secrets, ' +
    'found by value and shown as "[redacted]" at the places hidden_secrets names (never hidden for the name of a key).',
  ),
  hidden_secrets: z.array(z.string()).describe(
    'JSON Pointers to each string (or member, when its key held one) in which a vault secret is shown as "[redacted]": the tool ' +
    'receives the secret there. A "[redacted]" not named here is the agent\'s own text.',
  ),
  created_at: timestamp,
  expires_at: timestamp.describe('Undecided by then, the call ends denied.'),
});
export type ApprovalView = z.infer<typeof ApprovalView>;

/** One held call with its decision, once made. */
export const HeldApprovalView = ApprovalView.extend({
  decision: z.enum(['pending', 'approved', 'denied', 'expired', 'stopped']).describe('pending until it is decided or ends.'),
  decided_by: z.string().nullable().describe('The id of the API key that decided.'),
  decided_at: timestamp.nullable(),
  reason: z.string().nullable(),
});
export type HeldApprovalView = z.infer<typeof HeldApprovalView>;

export const ApprovalDecisionInput = z.strictObject({
  decision: z.enum(['approve', 'deny']),
  reason: z.string().min(1).max(1024).optional().describe('Why, kept with the decision; on a denial, what the model reads of why.'),
});
export type ApprovalDecisionInput = z.infer<typeof ApprovalDecisionInput>;

export const ApprovalDecided = z.object({ approval: CallApprovalView });
export type ApprovalDecided = z.infer<typeof ApprovalDecided>;
