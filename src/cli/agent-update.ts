/**
 * `subako push --agent <id>`: the agent's next version is its current spec, as the author wrote it, with
 * one change — the pushed package at the version just uploaded. Everything else is handed back as it was
 * requested ("latest" stays "latest", a pinned version stays pinned), so the new version means what a
 * `PUT /v1/agents/{id}` with the same spec would. Sessions already started keep the version they began on.
 * Pure: the HTTP is the command's.
 */
import type { AgentInput, AgentSpecView } from '../server/api/index.js';

export interface AgentChange {
  input: AgentInput;
  /** True when the agent did not grant the package before (it is granted now, without network). */
  added: boolean;
  /** The version the agent had granted, when it did. */
  previous: string | null;
}

export function agentInputWithPackage(spec: AgentSpecView, pkg: { name: string; version: string }): AgentChange {
  const granted = spec.tools.find((t) => t.package === pkg.name);
  const tools: NonNullable<AgentInput['tools']> = spec.tools.map((t) => ({
    package: t.package,
    version: t.package === pkg.name ? pkg.version : t.requested,
    egress: { allow: t.egress.allow, grants: t.egress.grants },
    data: t.data,
  }));
  if (!granted) tools.push({ package: pkg.name, version: pkg.version });
  return {
    input: {
      name: spec.name,
      description: spec.description,
      tools,
      skills: spec.skills.map((s) => ({ name: s.name, version: s.requested })),
      mcp_servers: spec.mcp_servers.map((m) => ({
        name: m.name, url: m.url, credential: m.credential, default_policy: m.default_policy, tools: m.tools, definitions: m.definitions,
      })),
      discovery: spec.discovery,
      // Each connection as published: an update through the CLI keeps the connections users made.
      ...(spec.connections && spec.connections.length > 0 ? {
        connections: spec.connections.map((c) => ({
          name: c.name, ...(c.mcp_server ? { mcp_server: c.mcp_server } : {}), ...(c.origin ? { origin: c.origin } : {}),
          ...(c.issuer ? { issuer: c.issuer } : {}), scopes: c.scopes, ...(c.client_id ? { client_id: c.client_id } : {}),
        })),
      } : {}),
    },
    added: !granted,
    previous: granted?.version ?? null,
  };
}
