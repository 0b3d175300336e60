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

export const DefinitionPolicy = z.enum(['pin', 'follow']).describe(
  'pin (default): the server\'s tool definitions (name, title, description, schemas, annotations, icons) are pinned by digest when a version is ' +
  'published (the server must answer then, or the publish is refused); a session serves only tools listed exactly as pinned — a changed one is ' +
  'withheld (a call is refused naming the change), an added one not served — until an operator accepts the drift into a new version ' +
  '(GET and POST /v1/agents/{id}/drift). A version published over one that pinned the same server (same name and URL) keeps its pins. ' +
  'follow: served as the server lists them now.',
);

/** How sessions offer the agent's tools. */
const Discovery = z.strictObject({
  mode: z.enum(['all', 'search']).optional().describe('all (default): tools/list shows every tool. search: it shows the entry tools and search_tools, which ' +
    'finds the others by words in their names, titles and descriptions (with a limit) and returns their definitions; every tool stays callable by name.'),
  entry: z.array(z.string().min(1).max(128)).max(64).optional().describe('With mode search: the tools listed, by their published names (a tool\'s own name, or <source>__<tool> where names clash).'),
});

/** Which credential authenticates to a remote server: a vault and, optionally, one credential in it. */
const RemoteCredential = z.strictObject({ vault_id: z.string().min(1).max(64), credential_id: z.string().min(1).max(64).optional() });

/** A connection the agent's end users make themselves: for one of its remote servers, or for an egress origin's OAuth provider. */
const ConnectionInput = z.strictObject({
  name: name64.describe('How the connection is named to people and in the API (unique in the agent).'),
  mcp_server: name64.optional().describe('One of this agent\'s mcp_servers: its authorization server is discovered (RFC 9728, RFC 8414) and the user\'s token is sent to it alone.'),
  origin: z.string().min(1).max(512).optional().describe('An egress origin (https://host[:port]) whose requests carry the user\'s token; with issuer.'),
  issuer: z.string().min(1).max(512).optional().describe('The OAuth provider of origin: its issuer URL (RFC 8414 metadata is read from it).'),
  scopes: z.array(z.string().min(1).max(128)).max(32).optional().describe('The scopes asked for.'),
  client_id: z.string().min(1).max(256).optional().describe('A client registered beforehand at the authorization server; without it subako uses a Client ID Metadata Document where supported, else dynamic registration as a web application.'),
});

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
    definitions: DefinitionPolicy.optional(),
  })).max(32).optional(),
  discovery: Discovery.optional(),
  connections: z.array(ConnectionInput).max(16).optional(),
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
    definitions: DefinitionPolicy,
  })),
  discovery: z.object({ mode: z.enum(['all', 'search']), entry: z.array(z.string()) }),
  connections: z.array(z.object({
    name: z.string(), mcp_server: z.string().nullable(), origin: z.string().nullable(), issuer: z.string().nullable(),
    scopes: z.array(z.string()), client_id: z.string().nullable(),
  })).optional().describe('The connections each end user makes themselves (users/{id}/connections).'),
});
export type AgentSpecView = z.infer<typeof AgentSpecView>;

export const AgentView = z.object({
  id: z.string(), name: z.string(), version: z.int(), created_at: timestamp, updated_at: timestamp,
  spec: AgentSpecView.describe('The current version\'s spec (GET of one agent, and the answers that publish a version).').optional(),
});
export type AgentView = z.infer<typeof AgentView>;

export const AgentVersionView = z.object({ agent_id: z.string(), version: z.int(), spec: AgentSpecView, created_at: timestamp });
export type AgentVersionView = z.infer<typeof AgentVersionView>;

/** A tool definition as pinned or listed, with the sha-256 of its canonical JSON. */
const DigestedDefinition = z.object({
  digest: z.string(),
  definition: z.object({
    name: z.string(), title: z.string().optional(), description: z.string().optional(),
    inputSchema: z.record(z.string(), z.unknown()), outputSchema: z.record(z.string(), z.unknown()).optional(),
    annotations: z.record(z.string(), z.unknown()).optional(), icons: z.array(z.record(z.string(), z.unknown())).optional(),
  }),
});

export const AgentDriftView = z.object({
  agent_id: z.string(),
  version: z.int().describe('The version compared: the agent\'s current one.'),
  drifted: z.boolean().describe('Whether any pinned server lists definitions other than the pinned ones.'),
  digest: z.string().describe('What accepting publishes (every pinned server\'s tools as listed now): POST it to /v1/agents/{id}/drift/accept.'),
  servers: z.array(z.object({
    server: z.string(),
    status: z.enum(['ok', 'unreachable']),
    error: z.string().optional().describe('Why the server could not be listed now.'),
    added: z.array(DigestedDefinition.extend({ name: z.string() })).describe('Listed, never pinned: not served until accepted.'),
    changed: z.array(z.object({
      name: z.string(), fields: z.array(z.string()).describe('The definition\'s fields that differ.'), pinned: DigestedDefinition, listed: DigestedDefinition,
    })).describe('Listed differently from the pin: withheld until accepted.'),
    removed: z.array(DigestedDefinition.extend({ name: z.string() })).describe('Pinned, no longer listed.'),
  })).describe('Each server whose definitions are pinned.'),
});
export type AgentDriftView = z.infer<typeof AgentDriftView>;

export const DriftAcceptInput = z.strictObject({
  digest: z.string().min(1).max(128).describe('The digest of the drift reviewed (GET /v1/agents/{id}/drift): accepting publishes exactly that, or is refused (409 drift_changed).'),
});
export type DriftAcceptInput = z.infer<typeof DriftAcceptInput>;
