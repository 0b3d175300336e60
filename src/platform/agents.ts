/**
 * Agents: a name, the packages they may call (each with its egress policy and whether it gets /volume/data),
 * skills, and remote MCP servers with per-tool policy. Every change publishes a new immutable version;
 * "latest" is resolved when the version is published, so a version always names exact package and skill
 * versions (and deleting those is refused while it does).
 */
import { ValidationError, type Problem } from '../errors.js';
import { isHttpsOrLoopback, REDACTED, redactUrl } from '../common/index.js';
import { compilePolicy } from '../egress/index.js';
import { ConflictError, NotFoundError, UpstreamError } from './errors.js';
import { isToolName, TOOL_NAME_RULE } from '../mcp/index.js';
import type { AgentDrift, ToolPinning } from './tool-pinning.js';
import { newId, nowIso } from './ids.js';
import { PACKAGE_NAME } from './packages.js';
import { overlappingSource, SOURCE_SEPARATOR } from './calls/index.js';
import { DEFINITION_POLICIES, TOOL_POLICIES, type AgentDiscovery, type DefinitionPolicy, type ToolPin, type AgentRecord, type AgentSpec, type AgentVersionRecord, type Page, type PageRequest, type ToolPolicy,
  type AgentStore, type PackageStore, type SessionStore, type SkillStore, type VaultStore } from './store/index.js';
import { stopNoCalls, type StopCalls } from './sessions.js';
import { checkConnections, type ConnectionInput } from './connection-spec.js';
import type { Volumes } from './volumes/index.js';

/** An agent as the API receives it (the body is shape-checked by the HTTP layer first). */
export interface AgentInput {
  name: string;
  description?: string;
  tools?: { package: string; version?: string; egress?: { allow?: string[]; grants?: string[] }; data?: boolean }[];
  skills?: { name: string; version?: string }[];
  mcp_servers?: {
    name: string;
    url: string;
    credential?: { vault_id: string; credential_id?: string } | null;
    default_policy?: ToolPolicy;
    tools?: { name: string; policy: ToolPolicy }[];
    /** `pin` (default): tool definitions pinned at publish, changes withheld until accepted; `follow`: served as listed. */
    definitions?: DefinitionPolicy;
  }[];
  /** How sessions offer the tools (default: every tool listed). */
  discovery?: { mode?: 'all' | 'search'; entry?: string[] };
  /** Connections each end user makes themselves (connections.ts). */
  connections?: ConnectionInput[];
}

/** The most entry tools an agent whose discovery is `search` lists. */
export const MAX_ENTRY_TOOLS = 64;

export const SOURCE_NAME = PACKAGE_NAME;

/** The agents, and what an agent's spec is resolved against (packages, skills, vaults) and deletes with it (sessions). */
type AgentServiceStore = AgentStore & Pick<PackageStore, 'getPackage' | 'latestPackage'> & Pick<SkillStore, 'getSkill' | 'latestSkill'>
  & Pick<VaultStore, 'getVault' | 'getCredential'> & Pick<SessionStore, 'listSessions'>;

export class AgentService {
  constructor(
    private readonly store: AgentServiceStore,
    private readonly volumes: Volumes,
    private readonly stopCalls: StopCalls = stopNoCalls,
    /** Pins remote tool definitions as a version is published; without it (library use with no remote servers) none are. */
    private readonly pinning?: ToolPinning,
  ) {}

  /** Creates the agent's version 1, its `pin` servers' tool definitions pinned with it. */
  async create(input: AgentInput): Promise<{ agent: AgentRecord; version: AgentVersionRecord }> {
    const spec = await this.resolve(input);
    const pins = await this.pinsFor(spec);
    const now = nowIso();
    const agent: AgentRecord = { id: newId('agt'), name: spec.name, currentVersion: 1, createdAt: now, updatedAt: now };
    const version: AgentVersionRecord = { agentId: agent.id, version: 1, spec, createdAt: now };
    await this.store.createAgent(agent, version, pins);
    return { agent, version };
  }

  /**
   * Publishes a new version from a full spec. A remote server's URL sent back as the API shows it (redacted:
   * common/url-secrecy.ts) means the URL the current version has for that server, so a spec read, changed and
   * put back keeps its credentials in the URL without anyone having seen them. A `pin` server the current version
   * already pinned (the same name and URL) keeps its pins — publishing is not accepting a change, that is
   * acceptDrift's — the others are pinned as they list now.
   */
  async update(id: string, input: AgentInput): Promise<{ agent: AgentRecord; version: AgentVersionRecord }> {
    const agent = await this.get(id);
    const previous = await this.version(id, agent.currentVersion);
    const stored = new Map(previous.spec.mcp_servers.map((server) => [server.name, server.url]));
    const servers = input.mcp_servers?.map((server) => {
      const url = stored.get(server.name);
      return url !== undefined && url !== server.url && redactUrl(url) === server.url ? { ...server, url } : server;
    });
    const spec = await this.resolve(servers === undefined ? input : { ...input, mcp_servers: servers });
    const keeps = (name: string): boolean => {
      const before = previous.spec.mcp_servers.find((s) => s.name === name);
      const now = spec.mcp_servers.find((s) => s.name === name);
      return before !== undefined && now !== undefined && before.definitions === 'pin' && before.url === now.url;
    };
    const kept = spec.mcp_servers.some((s) => s.definitions === 'pin' && keeps(s.name))
      ? (await this.store.getToolPins(id, previous.version)).filter((pin) => keeps(pin.server))
      : [];
    return this.publish(agent, spec, [...kept, ...(await this.pinsFor(spec, (name) => !keeps(name)))]);
  }

  /** What the current version's pinned servers list now against its pins. */
  async drift(id: string): Promise<AgentDrift> {
    const agent = await this.get(id);
    const version = await this.version(id, agent.currentVersion);
    return this.requirePinning().drift(id, version.version, version.spec, await this.store.getToolPins(id, version.version));
  }

  /**
   * Publishes the next version with the current one's spec and the pins of what its servers list now — exactly the
   * drift that was reviewed: `digest` must be the drift's, or the listing changed again since and nothing is published.
   */
  async acceptDrift(id: string, digest: string): Promise<{ agent: AgentRecord; version: AgentVersionRecord }> {
    const drift = await this.drift(id);
    const unreachable = drift.servers.find((s) => s.status === 'unreachable');
    if (unreachable) throw new UpstreamError(`remote MCP server ${unreachable.server} cannot be listed now (${unreachable.error ?? 'no answer'}); accept once it answers`, 'agent.pin_unreachable');
    if (digest !== drift.digest) {
      throw new ConflictError(`the tool definitions the remote servers list are not the ones reviewed (drift digest ${drift.digest}, not ${digest}); review the drift again and accept its digest`, 'drift_changed');
    }
    if (!drift.drifted) throw new ConflictError(`agent ${id} has no drift to accept: its remote servers list the definitions version ${drift.version} pinned`, 'no_drift');
    const agent = await this.get(id);
    if (agent.currentVersion !== drift.version) throw new ConflictError(`agent ${id} changed meanwhile (now at version ${agent.currentVersion}); review the drift again`);
    const current = await this.version(id, drift.version);
    return this.publish(agent, current.spec, drift.pins);
  }

  private async publish(agent: AgentRecord, spec: AgentSpec, pins: readonly ToolPin[]): Promise<{ agent: AgentRecord; version: AgentVersionRecord }> {
    const version: AgentVersionRecord = { agentId: agent.id, version: agent.currentVersion + 1, spec, createdAt: nowIso() };
    await this.store.publishAgentVersion(version, pins);
    return { agent: { ...agent, name: spec.name, currentVersion: version.version, updatedAt: version.createdAt }, version };
  }

  /** The pins of the spec's `pin` servers that `fresh` picks (all by default), listed now. */
  private pinsFor(spec: AgentSpec, fresh: (server: string) => boolean = () => true): Promise<ToolPin[]> {
    if (!spec.mcp_servers.some((s) => s.definitions === 'pin' && fresh(s.name))) return Promise.resolve([]);
    return this.requirePinning().pin(spec, fresh);
  }

  private requirePinning(): ToolPinning {
    if (!this.pinning) throw new Error('this platform pins no remote tool definitions (no remote MCP client was given)');
    return this.pinning;
  }

  async get(id: string): Promise<AgentRecord> {
    const agent = await this.store.getAgent(id);
    if (!agent) throw new NotFoundError(`agent ${id}`);
    return agent;
  }

  async version(id: string, version: number): Promise<AgentVersionRecord> {
    const rec = await this.store.getAgentVersion(id, version);
    if (!rec) throw new NotFoundError(`version ${version} of agent ${id}`);
    return rec;
  }

  list(page: PageRequest): Promise<Page<AgentRecord>> {
    return this.store.listAgents(page);
  }

  async versions(id: string, page: PageRequest): Promise<Page<AgentVersionRecord>> {
    await this.get(id);
    return this.store.listAgentVersions(id, page);
  }

  /**
   * Deletes the agent, its sessions and their volumes, and its own /volume/data: the records first, then
   * the calls are stopped, then every volume is moved out of reach and removed (volumes.ts).
   */
  async delete(id: string, onSessionGone: (sessionId: string) => void): Promise<void> {
    await this.get(id);
    const sessionIds: string[] = [];
    for (let after: string | undefined; ;) {
      const page = await this.store.listSessions(id, { limit: 200, after });
      sessionIds.push(...page.items.map((s) => s.id));
      if (page.next_cursor === null) break;
      after = page.next_cursor;
    }
    await this.store.deleteAgent(id);
    for (const sessionId of sessionIds) onSessionGone(sessionId);
    await this.stopCalls(sessionIds, id);
    await this.volumes.remove(sessionIds, id);
  }

  /** Checks an input against what exists and pins every "latest". Throws a ValidationError listing all problems. */
  private async resolve(input: AgentInput): Promise<AgentSpec> {
    const problems: Problem[] = [];
    const spec: AgentSpec = {
      name: input.name.trim(), description: input.description ?? '', tools: [], skills: [], mcp_servers: [], discovery: discoveryOf(input.discovery, problems), connections: [],
    };
    if (spec.name.length === 0 || spec.name.length > 128) problems.push({ code: 'agent.name', message: 'name must be 1-128 characters' });

    const sourceNames = new Set<string>();
    const sources: NamedSource[] = [];
    for (const [i, tool] of (input.tools ?? []).entries()) {
      const where = `tools[${i}]`;
      const requested = tool.version ?? 'latest';
      if (sourceNames.has(tool.package)) problems.push({ code: 'agent.duplicate_source', message: `${where}: package ${tool.package} is granted twice` });
      sourceNames.add(tool.package);
      checkPrefix(problems, { where, name: tool.package, label: `package ${tool.package}`, server: false }, sources);
      const pkg = requested === 'latest' ? await this.store.latestPackage(tool.package) : await this.store.getPackage(tool.package, requested);
      if (!pkg) {
        problems.push({ code: 'agent.unknown_package', message: `${where}: package ${tool.package}@${requested} does not exist` });
        continue;
      }
      const allow = tool.egress?.allow ?? [];
      // The one check of an egress policy (egress/'s, with its codes), made as the agent is published: a call
      // compiles the same policy once per session and never finds it wrong.
      let canonicalGrants: string[] = [];
      try {
        canonicalGrants = [...compilePolicy({ allow, grants: tool.egress?.grants ?? [] }).grants];
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        problems.push(...err.problems.map((p) => ({ code: p.code, message: `${where}.egress: ${p.message}` })));
      }
      spec.tools.push({ package: pkg.name, requested, version: pkg.version, egress: { allow, grants: canonicalGrants }, data: tool.data ?? false });
    }

    const skillNames = new Set<string>();
    for (const [i, skill] of (input.skills ?? []).entries()) {
      const requested = skill.version ?? 'latest';
      if (skillNames.has(skill.name)) problems.push({ code: 'agent.duplicate_skill', message: `skills[${i}]: skill ${skill.name} is listed twice` });
      skillNames.add(skill.name);
      const rec = requested === 'latest' ? await this.store.latestSkill(skill.name) : await this.store.getSkill(skill.name, requested);
      if (!rec) problems.push({ code: 'agent.unknown_skill', message: `skills[${i}]: skill ${skill.name}@${requested} does not exist` });
      else spec.skills.push({ name: rec.name, requested, version: rec.version });
    }

    for (const [i, server] of (input.mcp_servers ?? []).entries()) {
      const where = `mcp_servers[${i}]`;
      if (!SOURCE_NAME.test(server.name)) problems.push({ code: 'agent.server_name', message: `${where}: name ${JSON.stringify(server.name)} must be 1-64 characters of a-z, 0-9, "_" and "-"` });
      else checkPrefix(problems, { where, name: server.name, label: `remote MCP server ${server.name}`, server: true }, sources);
      if (sourceNames.has(server.name)) problems.push({ code: 'agent.duplicate_source', message: `${where}: the name ${server.name} is already used by another source of this agent` });
      sourceNames.add(server.name);
      if (!isServerUrl(server.url)) problems.push({ code: 'agent.server_url', message: `${where}: url must be an https URL` });
      else if (server.url.includes(REDACTED)) {
        problems.push({ code: 'agent.server_url', message: `${where}: url holds "${REDACTED}", as the API shows a URL's credentials; send the whole URL, or the shown one unchanged for a server of the same name` });
      }
      const credential = server.credential ?? null;
      if (credential) {
        const vault = await this.store.getVault(credential.vault_id);
        if (!vault) problems.push({ code: 'agent.unknown_vault', message: `${where}: vault ${credential.vault_id} does not exist` });
        // An agent serves every user: its own credentials are the operator's. A user's vault reaches only that user's sessions.
        else if (vault.userId !== null) {
          problems.push({ code: 'agent.user_vault', message: `${where}: vault ${credential.vault_id} belongs to a user; an agent's remote server takes a credential from a vault of no user (a user's vaults reach only that user's sessions)` });
        }
        else if (credential.credential_id && !(await this.store.getCredential(credential.vault_id, credential.credential_id))) {
          problems.push({ code: 'agent.unknown_credential', message: `${where}: credential ${credential.credential_id} is not in vault ${credential.vault_id}` });
        }
      }
      const toolNames = new Set<string>();
      const definitions = server.definitions ?? 'pin';
      if (!(DEFINITION_POLICIES as readonly unknown[]).includes(definitions)) {
        problems.push({ code: 'agent.definitions', message: `${where}.definitions: ${JSON.stringify(definitions)} is not a definitions policy; use pin (definitions pinned when published, a changed or added tool withheld until accepted) or follow (served as listed)` });
      }
      if (server.default_policy !== undefined) checkPolicy(server.default_policy, `${where}.default_policy`, problems);
      for (const [index, tool] of (server.tools ?? []).entries()) {
        if (toolNames.has(tool.name)) problems.push({ code: 'agent.duplicate_tool_policy', message: `${where}: tool ${tool.name} has two policies` });
        toolNames.add(tool.name);
        checkPolicy(tool.policy, `${where}.tools[${index}].policy`, problems);
      }
      spec.mcp_servers.push({
        name: server.name, url: server.url, credential: credential ? { vault_id: credential.vault_id, ...(credential.credential_id ? { credential_id: credential.credential_id } : {}) } : null,
        default_policy: server.default_policy ?? 'allow', tools: (server.tools ?? []).map((t) => ({ name: t.name, policy: t.policy })), definitions,
      });
    }
    spec.connections = checkConnections(input.connections ?? [], spec.mcp_servers, problems);
    if (problems.length > 0) throw new ValidationError(problems);
    return spec;
  }
}

/** An agent's discovery as published: `all` with no entry tools, or `search` with up to MAX_ENTRY_TOOLS distinct tool names. */
function discoveryOf(input: AgentInput['discovery'], problems: Problem[]): AgentDiscovery {
  const mode = input?.mode ?? 'all';
  const entry = input?.entry ?? [];
  if (mode !== 'all' && mode !== 'search') {
    problems.push({ code: 'agent.discovery', message: `discovery.mode: ${JSON.stringify(mode)} is not a mode; use all (every tool listed) or search (entry tools and search_tools listed)` });
  } else if (mode === 'all' && entry.length > 0) {
    problems.push({ code: 'agent.discovery', message: 'discovery.entry: entry tools are listed only with mode "search"; set mode to search or leave entry out' });
  }
  if (entry.length > MAX_ENTRY_TOOLS) problems.push({ code: 'agent.discovery', message: `discovery.entry: at most ${MAX_ENTRY_TOOLS} entry tools (got ${entry.length})` });
  for (const [i, name] of entry.entries()) {
    if (!isToolName(name)) problems.push({ code: 'agent.discovery', message: `discovery.entry[${i}]: ${JSON.stringify(name)} is not a tool name (${TOOL_NAME_RULE})` });
  }
  if (new Set(entry).size !== entry.length) problems.push({ code: 'agent.discovery', message: 'discovery.entry: a tool is named twice' });
  return { mode: mode === 'search' ? 'search' : 'all', entry: [...entry] };
}

interface NamedSource {
  where: string;
  name: string;
  label: string;
  /** A remote server's name is the agent's to choose; a package's is its manifest's. */
  server: boolean;
}

/**
 * Refuses a source whose prefix overlaps an earlier source's (`a` and `a_`, `a` and `a__b`: tool-names.ts):
 * a prefixed name such as `a__b__x` could then not say whose tool it is. Then remembers the source.
 */
function checkPrefix(problems: Problem[], source: NamedSource, earlier: NamedSource[]): void {
  const other = overlappingSource(source.name, earlier.map((e) => e.name));
  const otherSource = earlier.find((e) => e.name === other);
  if (otherSource) {
    const [short, long] = otherSource.name.length <= source.name.length ? [otherSource.name, source.name] : [source.name, otherSource.name];
    const sep = SOURCE_SEPARATOR;
    problems.push({
      code: 'agent.source_prefix',
      message: `${source.where}: ${source.label} cannot be a source beside ${otherSource.label} (${otherSource.where}): a name beginning with "${short}${sep}" always means a tool of ${short}, and the prefixed names of ${long}'s tools ("${long}${sep}<tool>") would begin with it too; grant only one of them${source.server || otherSource.server ? `, or rename the remote server so that neither name is the other's followed by "_" or by "${sep}"` : ''}`,
    });
  }
  earlier.push(source);
}

/**
 * A tool policy is one of TOOL_POLICIES (the HTTP layer's schema checks the same list; this holds for library
 * callers too). Who approves is part of the name: an operator (`require_approval`) or the end user.
 */
function checkPolicy(policy: unknown, where: string, problems: Problem[]): void {
  if ((TOOL_POLICIES as readonly unknown[]).includes(policy)) return;
  problems.push({
    code: 'agent.policy',
    message: `${where}: ${JSON.stringify(policy)} is not a policy; use allow, require_approval (an operator approves each call: ` +
      'an API key, through the API or the console), require_user_approval (the end user approves each call through the MCP client\'s ' +
      'elicitation; held for an operator when the client cannot ask) or deny',
  });
}

/** Remote servers are reached over https; plain http only on the loopback interface (local servers, tests). */
export function isServerUrl(text: string): boolean {
  // A fragment never reaches the server; one in a stored server URL is a mistake, refused rather than dropped.
  return isHttpsOrLoopback(text) && new URL(text).hash === '';
}
