/**
 * /v1/agents: an agent as the API takes it (POST, PUT) and as it shows it — the spec as published, each package
 * and skill with the version its author asked for (`requested`) and the one it resolved to (`version`).
 */
import { z } from 'zod';
import { name64, stringList, timestamp, versionRef } from './shared.js';

export const ToolPolicy = z.enum(['allow', 'require_approval', 'require_user_approval', 'deny']).describe(
  'allow: served; require_approval: served, each call held until an operator (an API key: the API or the console) approves it; ' +
  'require_user_approval: served, each call approved by the end user through the MCP client\'s elicitation, which shows the whole call ' +
  '(held for an operator instead when the client cannot ask, or the call cannot be shown whole in one message); deny: not served.',
);
export type ToolPolicy = z.infer<typeof ToolPolicy>;

/** Which credential authenticates to a remote server: a vault and, optionally, one credential in it. */
const RemoteCredential = z.strictObject({ vault_id: z.string().min(1).max(64), credential_id: z.string().min(1).max(64).optional() });

export const AgentInput = z.strictObject({
  name: z.string().min(1).max(128),
  description: z.string().max(4096).optional(),
  tools: z.array(z.strictObject({
    package: name64,
    version: versionRef.optional(),
    egress: z.strictObject({ allow: stringList(256).optional(), grants: stringList(64).optional() }).optional(),
    data: z.boolean().optional(),
  })).max(64).optional(),
  skills: z.array(z.strictObject({ name: name64, version: versionRef.optional() })).max(64).optional(),
  mcp_servers: z.array(z.strictObject({
    name: name64,
    url: z.string().min(1).max(2048),
    credential: RemoteCredential.nullable().optional(),
    default_policy: ToolPolicy.optional(),
    tools: z.array(z.strictObject({ name: z.string().min(1).max(128), policy: ToolPolicy })).max(256).optional(),
  })).max(32).optional(),
});
export type AgentInput = z.infer<typeof AgentInput>;

export const AgentSpecView = z.object({
  name: z.string(),
  description: z.string(),
  tools: z.array(z.object({
    package: z.string(),
    requested: z.string().describe('The version the author asked for ("latest" or a version).'),
    version: z.string().describe('The version it resolved to when this agent version was published.'),
    egress: z.object({ allow: z.array(z.string()), grants: z.array(z.string()) }),
    data: z.boolean(),
  })),
  skills: z.array(z.object({ name: z.string(), requested: z.string(), version: z.string() })),
  mcp_servers: z.array(z.object({
    name: z.string(),
    url: z.string(),
    credential: z.object({ vault_id: z.string(), credential_id: z.string().optional() }).nullable(),
    default_policy: ToolPolicy,
    tools: z.array(z.object({ name: z.string(), policy: ToolPolicy })),
  })),
});
export type AgentSpecView = z.infer<typeof AgentSpecView>;

export const AgentView = z.object({
  id: z.string(), name: z.string(), version: z.int(), created_at: timestamp, updated_at: timestamp,
  spec: AgentSpecView.describe('The current version\'s spec (GET of one agent, and the answers that publish a version).').optional(),
});
export type AgentView = z.infer<typeof AgentView>;

export const AgentVersionView = z.object({ agent_id: z.string(), version: z.int(), spec: AgentSpecView, created_at: timestamp });
export type AgentVersionView = z.infer<typeof AgentVersionView>;
