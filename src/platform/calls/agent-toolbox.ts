/**
 * A session's toolbox, the one pipeline every entry point calls: the function tools of its agent version's
 * packages and the allowed tools of its remote MCP servers (policy `allow`, and `require_approval` and
 * `require_user_approval`, whose calls the call log holds for an operator's or asks the end user's approval:
 * approvals.ts), built once per session, each wrapped once by the
 * call log under the name tool-names.ts publishes. REST, the session's MCP endpoint and in-process code all
 * call these same tools (`entry(via)` for a sink: the same tools, recorded as made through it), so a rule of
 * a call — the arguments check, which is the source's own, the call log, admission — is the same from each.
 *
 * Function tools run with the session's context (its /volume/tmp, the agent's /volume/data when granted,
 * the skills, the egress policy and the session's vault credentials), made afresh for every call so
 * refreshed tokens are used, with the write budget the volumes' quotas leave the call reserved first.
 *
 * A remote server whose definitions are pinned (`pin`, tool-pins.ts) has only the tools listed exactly as the
 * session's agent version pinned them served; a changed one is withheld (its call refused with why), an added one
 * not served at all, until an operator accepts them into a new agent version. An agent whose discovery is `search`
 * lists its entry tools and `search_tools` (tool-search.ts); every served tool stays callable by name.
 *
 * Toolboxes are cached per session; those with remote servers are rebuilt after a minute (remote tool lists
 * and OAuth tokens change), those without live until the session goes.
 */
import { systemClock, type Clock } from '../../common/index.js';
import { DEFAULT_CALL_LIMITS, type CallLimits } from '../../config.js';
import type { FunctionCallContext } from '../../function/index.js';
import { requiresTask, type Catalog, type ListenFilter, type ListingChange, type UpstreamListen } from '../../mcp/index.js';
import { resourceNaming, type ResourceNaming } from './resource-uris.js';
import { withCatalogInputRelay } from './catalog-input-relay.js';
import { compilePolicy } from '../../egress/index.js';
import { composeTool, type CallToolResult, type Tool, type ToolInterceptor, type Toolbox } from '../../tool.js';
import type { CallLog, SessionCallContext } from './call-log.js';
import type { CallAdmission } from './call-admission.js';
import { admissionStep } from './admission-step.js';
import type { FleetSlots } from './fleet-slots.js';
import { approvalStep } from './approval-step.js';
import { inputRelayStep } from './input-relay-step.js';
import type { InputRelay } from './input-relay.js';
import { MAX_SESSION_TTL_MS, SessionCatalog, type CatalogSource } from './session-catalog.js';
import type { Approvals, Approver } from './approvals.js';
import type { PackageService } from '../packages.js';
import type { PackageRuntime } from '../package-runtime.js';
import type { RemoteMcp } from '../remote-mcp.js';
import type { SkillService } from '../skills.js';
import type { AgentConnection, ToolPin, AgentSpec, AgentToolGrant, AgentRemoteServer, CallVia, SessionRecord, SkillRecord, AgentStore, PackageStore, SkillStore } from '../store/index.js';
import { publishToolNames, type SourceTools } from './tool-names.js';
import { compareWithPins, driftWarning, hasDrift, withheldMessage } from './tool-pins.js';
import { SEARCH_TOOL_NAME, searchToolsTool } from './tool-search.js';
import { remoteServerHeaders } from './remote-headers.js';
import { connectedTool, egressConnectedTool, type ConnectedToolDeps } from './connected-tools.js';
import type { VaultService } from '../vaults.js';
import type { Volumes } from '../volumes/index.js';
import { NotFoundError } from '../errors.js';
import type { QuotaVolume, VolumeQuotas } from '../volumes/index.js';

/**
 * One of a session's tools as every entry point calls it: composed once with the call log, its approval (when its
 * policy needs one) and admission. `ctx.via` names the entry point; `ctx.onRecord` hears the call's record.
 */
export interface SessionTool extends Tool {
  call(args: Record<string, unknown>, ctx?: SessionCallContext): Promise<CallToolResult>;
  /** The tool's calls wait for a person's approval (agent policy `require_approval` or `require_user_approval`). */
  readonly requiresApproval?: boolean;
}

export interface AgentToolbox {
  /** Under their published names, each composed with the session's steps. */
  tools: Record<string, SessionTool>;
  /** The same tools as a sink serves them: each call recorded as made through `via`. Built once per toolbox. */
  entry(via: CallVia): Toolbox;
  /** Secret values this session can reach, for redacting the call log. */
  secrets: string[];
  /** Sources and tools left out, with why (a remote server that did not answer, a tool the naming rule could not name). */
  warnings: string[];
  /** The resources, resource templates and prompts of the agent's remote servers, named per server (session-catalog.ts). */
  catalog: Catalog;
  /** Published names not served, each with why (a pinned tool whose upstream definition changed): a call is refused with it. */
  withheld: ReadonlyMap<string, string>;
  /** The names a listing shows (the agent's discovery is `search`: its entry tools and `search_tools`); absent: every tool. */
  listed?: readonly string[];
  /** The caching hints a listing of these tools carries: private to the session, as long as the toolbox is kept at most. */
  listHint: { ttlMs: number; cacheScope: 'private' };
  /** The remote servers whose changes a listening client of the session hears (session-changes.ts), in the agent's order. */
  changeSources: readonly ChangeSource[];
  /** How the session names its servers' resources (resource-uris.ts): a listen's URIs are mapped with it both ways. */
  resourceNaming: ResourceNaming;
}

/** A remote server of a session, as a source of change notifications. */
export interface ChangeSource {
  server: string;
  /** Opens a listen stream to the server (its own names); undefined when it has none. */
  listen(filter: ListenFilter, onChange: (change: ListingChange) => void): Promise<UpstreamListen | undefined>;
}

export interface SessionToolboxDeps {
  store: Pick<AgentStore, 'getAgentVersion' | 'getToolPins'> & Pick<PackageStore, 'getPackage'> & Pick<SkillStore, 'getSkill'>;
  packages: PackageService;
  skills: SkillService;
  runtime: PackageRuntime;
  vaults: VaultService;
  volumes: Volumes;
  remote: RemoteMcp;
  quotas: VolumeQuotas;
  calls: CallLog;
  /** Who may run now: every call of a session's tools asks it for a turn. */
  admission: CallAdmission;
  /** Scale-out: the slots every replica's calls share (fleet-slots.ts), taken after the replica's own turn. */
  fleetSlots?: FleetSlots;
  /** Where calls of `require_approval` and `require_user_approval` tools get their approval. */
  approvals: Approvals;
  limits?: Partial<CallLimits>;
  /** Decides when a cached toolbox with remote tools is stale. */
  clock?: Clock;
  /** Whether packages may reach loopback and private addresses (the server's local-development setting). */
  privateDestinations?: 'deny' | 'allow';
  /** Passes what a remote tool asks its client for to the session's client (input-relay.ts). */
  inputRelay: InputRelay;
  /** The platform's sealing key (the cursors of a session's resource listings). */
  sealingKey: Buffer;
  /** End users' own connections (connections.ts), for the servers an agent reaches with them. */
  connections?: ConnectedToolDeps['connections'];
  /** Hears what a session's client is not told (a remote server left out of its resources or prompts). */
  report?: (error: Error) => void;
}

const REMOTE_TOOLBOX_TTL_MS = 60_000;

export class SessionToolboxes {
  private readonly cache = new Map<string, { built: Promise<AgentToolbox>; expires: number }>();

  constructor(private readonly deps: SessionToolboxDeps) {}

  forSession(session: SessionRecord): Promise<AgentToolbox> {
    const cached = this.cache.get(session.id);
    const clock = this.deps.clock ?? systemClock;
    if (cached && cached.expires > clock.now()) return cached.built;
    const built = this.build(session);
    const entry = { built, expires: Number.POSITIVE_INFINITY };
    this.cache.set(session.id, entry);
    built.then(
      (box) => { if (box.warnings.length > 0 || this.hasRemote(box)) entry.expires = clock.now() + REMOTE_TOOLBOX_TTL_MS; },
      () => { if (this.cache.get(session.id) === entry) this.cache.delete(session.id); },
    );
    return built;
  }

  evict(sessionId: string): void {
    this.cache.delete(sessionId);
  }

  private hasRemote(box: AgentToolbox): boolean {
    return Object.values(box.tools).some((tool) => tool.source?.kind !== 'function');
  }

  private async build(session: SessionRecord): Promise<AgentToolbox> {
    const version = await this.deps.store.getAgentVersion(session.agentId, session.agentVersion);
    if (!version) throw new NotFoundError(`version ${session.agentVersion} of agent ${session.agentId}`);
    const spec = version.spec;
    const secrets = new Set<string>();
    for (const credential of await this.deps.vaults.openForSession(session)) {
      for (const value of Object.values(credential.headers)) addSecret(secrets, value);
    }
    const sources: { source: string; tools: Tool[] }[] = [];
    // Only a version with a pinned server reads its pins.
    const pins = spec.mcp_servers.some((s) => s.definitions === 'pin') ? await this.deps.store.getToolPins(session.agentId, session.agentVersion) : [];
    /** Remote tools named like the others but not served: their listed definition is not the pinned one. */
    const withheldTools = new Map<Tool, { server: string; fields: string[] }>();
    const catalogSources: CatalogSource[] = [];
    const changeSources: ChangeSource[] = [];
    /** The agent's name of each remote tool's server, for what the input relay tells the client's person. */
    const serverOf = new Map<Tool, string>();
    const warnings: string[] = [];
    const needApproval = new Map<Tool, Approver>();
    // What every call of the session mounts is resolved once, here: the skills, the volumes, the egress policy.
    const skillsDir = await this.skillsDir(spec);
    for (const grant of spec.tools) {
      const rec = await this.deps.store.getPackage(grant.package, grant.version);
      if (!rec) throw new NotFoundError(`package ${grant.package}@${grant.version}`);
      const ref = await this.deps.packages.ref(rec);
      const base = await this.grantContext(session, grant, skillsDir, spec);
      const box = await this.deps.runtime.toolbox(ref, rec.tools, () => this.callContext(session, base));
      const tools = rec.tools.map((info) => box[info.name]).filter((tool): tool is Tool => tool !== undefined);
      // Origins of its egress the agent reaches with each user's own account: a call asks for a connection not made.
      const needs = base.connections.filter((c) => c.origin !== null && grant.egress.grants.includes(c.origin));
      const caller = { userId: session.userId, sessionId: session.id, agentId: session.agentId, agentVersion: session.agentVersion };
      sources.push({
        source: grant.package,
        tools: needs.length === 0 ? tools : tools.map((tool) => egressConnectedTool(tool, needs, caller, { connections: this.requireConnections(), remote: this.deps.remote })),
      });
    }
    for (const server of spec.mcp_servers) {
      try {
        // A server the agent reaches with each user's own connection: that user's token, or none yet (connected-tools.ts).
        const connection = (spec.connections ?? []).find((c) => c.mcp_server === server.name);
        const headers = connection ? await this.connectionHeaders(session, connection) : await this.remoteHeaders(server, session);
        for (const value of Object.values(headers)) addSecret(secrets, value);
        // Opened on the session's first request for resources or prompts, with the same credential as its tools.
        catalogSources.push({ name: server.name, open: () => this.deps.remote.catalog(server.url, headers) });
        const { remote } = this.deps;
        if (remote.listen) changeSources.push({ server: server.name, listen: (filter, onChange) => remote.listen!(server.url, headers, filter, onChange) });
        const listed = connection ? await this.connectedListing(server, headers, pins) : await remote.tools(server.url, headers);
        let current = Object.values(listed);
        if (server.definitions === 'pin') {
          const drift = compareWithPins(server.name, pins, current);
          if (hasDrift(drift)) warnings.push(driftWarning(server.name, drift, session.agentId));
          // Named with the served ones (a withheld tool keeps its name), never an added one (it would rename others').
          for (const changed of drift.changed) withheldTools.set(changed.tool, { server: server.name, fields: changed.fields });
          current = [...drift.unchanged, ...drift.changed.map((c) => c.tool)];
        }
        if (connection) {
          const caller = { userId: session.userId, sessionId: session.id, agentId: session.agentId, agentVersion: session.agentVersion };
          const deps = { connections: this.requireConnections(), remote: this.deps.remote };
          // A withheld tool is not called, and stays the object the withheld set names.
          current = current.map((tool) => (withheldTools.has(tool) ? tool : connectedTool(tool, server, connection, caller, deps)));
        }
        const { tools, taskOnly, approval } = this.remoteTools(server, current);
        for (const tool of tools) serverOf.set(tool, server.name);
        for (const [tool, approver] of approval) needApproval.set(tool, approver);
        for (const name of taskOnly) warnings.push(taskOnlyWarning(server.name, name));
        sources.push({ source: server.name, tools });
      } catch (err) {
        warnings.push(`remote MCP server ${server.name} is unavailable: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const naming = publishToolNames(sources.map((s): SourceTools => ({ source: s.source, tools: s.tools.map((t) => t.name) })));
    warnings.push(...naming.warnings);
    const scope = { session, secrets: [...secrets] };
    const tools: Record<string, SessionTool> = {};
    // Looked up by source and name, not searched: a remote server chooses how many tools it lists.
    const bySource = new Map<string, Map<string, Tool>>();
    for (const s of sources) {
      if (bySource.has(s.source)) continue; // as the naming rule does: a repeated source name is the first's
      const byName = new Map<string, Tool>();
      for (const t of s.tools) if (!byName.has(t.name)) byName.set(t.name, t);
      bySource.set(s.source, byName);
    }
    const { calls, admission, approvals, inputRelay, fleetSlots } = this.deps;
    const withheld = new Map<string, string>();
    for (const { source, tool, name } of naming.published) {
      const original = bySource.get(source)?.get(tool);
      if (!original) continue;
      const changed = withheldTools.get(original);
      if (changed !== undefined) {
        withheld.set(name, withheldMessage(name, changed.server, changed.fields, session.agentId));
        continue;
      }
      const approver = needApproval.get(original);
      const server = serverOf.get(original);
      // The call log outermost (it records what the others decide), then, for a remote tool, the input relay (it sees a
      // retry before the approval does), then approval, then admission, then the tool.
      const steps: ToolInterceptor<SessionCallContext>[] = [
        calls.step(scope, name),
        ...(server !== undefined ? [inputRelayStep(inputRelay, scope, name, server, approver !== undefined)] : []),
        ...(approver ? [approvalStep(approvals.gate(approver), scope, name)] : []),
        admissionStep(admission, scope, name, original, calls.callTimeoutMs, fleetSlots),
      ];
      const composed: SessionTool = Object.freeze({ ...composeTool(original, steps, name), ...(approver ? { requiresApproval: true } : {}) });
      // defineProperty: a tool named "__proto__" is a tool like any other, not the record's prototype.
      Object.defineProperty(tools, name, { value: composed, enumerable: true });
    }
    let listed: string[] | undefined;
    if (spec.discovery.mode === 'search') {
      if (Object.prototype.hasOwnProperty.call(tools, SEARCH_TOOL_NAME)) {
        warnings.push(`tool ${SEARCH_TOOL_NAME} is left out: the agent's discovery is "search", and that name is the session's own search tool`);
        delete tools[SEARCH_TOOL_NAME];
      }
      const served = { ...tools };
      const search = Object.freeze(composeTool(searchToolsTool(() => served), [calls.step(scope, SEARCH_TOOL_NAME)]));
      Object.defineProperty(tools, SEARCH_TOOL_NAME, { value: search, enumerable: true });
      listed = [...spec.discovery.entry.filter((name) => Object.prototype.hasOwnProperty.call(served, name)), SEARCH_TOOL_NAME];
    }
    // Its prompts' and resources' input requests relayed to the session's client, their states sealed to the session.
    const catalog = withCatalogInputRelay(new SessionCatalog({
      sessionId: session.id, sources: catalogSources, sourceNames: [...spec.tools.map((g) => g.package), ...spec.mcp_servers.map((s) => s.name)], key: this.deps.sealingKey,
      ...(this.deps.report ? { report: this.deps.report } : {}),
    }), { sessionId: session.id, key: this.deps.sealingKey });
    return { tools, entry: entryViews(tools), secrets: scope.secrets, warnings, catalog, withheld, ...(listed ? { listed } : {}), listHint: { ttlMs: MAX_SESSION_TTL_MS, cacheScope: 'private' },
      changeSources, resourceNaming: resourceNaming(spec.mcp_servers.map((s) => s.name)),
    };
  }

  private get limits(): CallLimits {
    return { ...DEFAULT_CALL_LIMITS, ...this.deps.limits };
  }

  /** The volumes a call mounts, each with its quota across calls. */
  private quotaVolumes(context: FunctionCallContext): QuotaVolume[] {
    const { sessionVolumeBytes, agentVolumeBytes } = this.limits;
    const volumes = [{ dir: context.tmpDir, limitBytes: sessionVolumeBytes }];
    if (context.dataDir) volumes.push({ dir: context.dataDir, limitBytes: agentVolumeBytes });
    return volumes;
  }

  /** The session's skills, mounted together, once per session (a skill version never changes). */
  private async skillsDir(spec: AgentSpec): Promise<string | undefined> {
    const { skills, store } = this.deps;
    const records: SkillRecord[] = [];
    for (const skill of spec.skills) {
      const rec = await store.getSkill(skill.name, skill.version);
      if (rec) records.push(rec);
    }
    return skills.mountDir(records);
  }

  /**
   * What every call of a granted package shares for the session's life: its volumes (made once), its skills and
   * its egress policy, compiled once (validated when the agent was published: it compiles).
   */
  private async grantContext(session: SessionRecord, grant: AgentToolGrant, skillsDir: string | undefined, spec: AgentSpec): Promise<GrantContext> {
    const { volumes } = this.deps;
    const privateDestinations = this.deps.privateDestinations ?? 'deny';
    return {
      tmpDir: await volumes.sessionTmp(session.id),
      ...(grant.data ? { dataDir: await volumes.agentData(session.agentId) } : {}),
      ...(skillsDir ? { skillsDir } : {}),
      egress: { allow: grant.egress.allow, grants: grant.egress.grants, privateDestinations, compiled: compilePolicy({ ...grant.egress, privateDestinations }) },
      connections: (spec.connections ?? []).filter((c) => c.origin !== null && grant.egress.grants.includes(c.origin)),
    };
  }

  /**
   * A function call's context, made as the call starts from what the session shares: only what must be fresh is
   * done per call — the vault's credentials (a refreshed token), and the volumes' write budget, reserved last so a
   * context that could not be made holds no reservation; the run settles it (FunctionHost.call, always).
   */
  private async callContext(session: SessionRecord, base: GrantContext): Promise<FunctionCallContext> {
    const opened = (await this.deps.vaults.openForSession(session)).map((c) => ({ origin: c.origin, headers: c.headers }));
    // The user's own connection for an origin, whatever vaults the session names, in place of any other credential for it.
    const connected: { origin: string; headers: Record<string, string> }[] = [];
    if (session.userId !== null) {
      for (const connection of base.connections) {
        const headers = await this.requireConnections().headersFor(session.userId, connection.name);
        if (headers !== null) connected.push({ origin: connection.origin!, headers });
      }
    }
    const credentials = [...connected, ...opened.filter((c) => !connected.some((k) => k.origin === c.origin))];
    const { connections: _connections, ...shared } = base;
    const context: FunctionCallContext = {
      ...shared,
      egress: { ...base.egress, credentials },
      ...(this.deps.limits ? { limits: this.deps.limits } : {}),
    };
    context.volumeBudget = await this.deps.quotas.reserve(this.quotaVolumes(context), this.limits.writeBudgetBytes);
    return context;
  }

  /**
   * The server's tools its policy lets the session see (all but `deny`; `approval` holds those that need one, with
   * who approves them), and the names of those left out because they run only as tasks.
   */
  private remoteTools(server: AgentRemoteServer, listed: readonly Tool[]): { tools: Tool[]; taskOnly: string[]; approval: Map<Tool, Approver> } {
    const policies = new Map(server.tools.map((t) => [t.name, t.policy]));
    const policy = (tool: Tool) => policies.get(tool.name) ?? server.default_policy;
    const allowed = listed.filter((tool) => policy(tool) !== 'deny');
    const taskOnly = allowed.filter((tool) => requiresTask(tool)).map((tool) => tool.name);
    const tools = allowed.filter((tool) => !requiresTask(tool));
    const approval = new Map<Tool, Approver>();
    for (const tool of tools) {
      if (policy(tool) === 'require_approval') approval.set(tool, 'operator');
      else if (policy(tool) === 'require_user_approval') approval.set(tool, 'user');
    }
    return { tools, taskOnly, approval };
  }

  /** The session's user's token for a connection, or no header yet (a session of no user, or a user not connected). */
  private async connectionHeaders(session: SessionRecord, connection: AgentConnection): Promise<Record<string, string>> {
    if (session.userId === null) return {};
    return (await this.requireConnections().headersFor(session.userId, connection.name)) ?? {};
  }

  /**
   * A connected server's tool definitions: as it lists them (with the user's token, or without one for a server that
   * lists to anyone), else, before the user connected, as the agent version pinned them — so that a call of one can
   * ask the person to connect.
   */
  private async connectedListing(server: AgentRemoteServer, headers: Record<string, string>, pins: readonly ToolPin[]): Promise<Toolbox> {
    try {
      return await this.deps.remote.tools(server.url, headers);
    } catch (err) {
      const pinned = pins.filter((pin) => pin.server === server.name);
      if (pinned.length === 0) {
        throw new Error(`${err instanceof Error ? err.message : String(err)} (its tools are listed once the user connects, or from pins: set definitions to pin)`, { cause: err });
      }
      const noCall = (): Promise<never> => Promise.reject(new Error('a pinned definition is called through the user\'s connection'));
      return Object.fromEntries(pinned.map((pin) => [pin.tool, { ...pin.definition, source: { kind: 'mcp', url: server.url }, call: noCall } as Tool]));
    }
  }

  private requireConnections(): ConnectedToolDeps['connections'] {
    if (!this.deps.connections) throw new Error('this platform holds no user connections (no ConnectionService was given)');
    return this.deps.connections;
  }

  /** The headers a server's vault credential supplies (none without one), from a vault the session may use. */
  private remoteHeaders(server: AgentRemoteServer, session: SessionRecord): Promise<Record<string, string>> {
    return remoteServerHeaders(this.deps.vaults, server, session);
  }
}

/** What the calls of one granted package share for a session's life (FunctionCallContext but for what is per call). */
type GrantContext = Pick<FunctionCallContext, 'tmpDir' | 'dataDir' | 'skillsDir'> & {
  egress: Omit<NonNullable<FunctionCallContext['egress']>, 'credentials'>;
  /** The agent's connections for origins this grant reaches (each user's own account). */
  connections: AgentConnection[];
};

/** Per entry point, the session's tools with their calls recorded as made through it; each view made once, when first asked. */
function entryViews(tools: Record<string, SessionTool>): (via: CallVia) => Toolbox {
  const views = new Map<CallVia, Toolbox>();
  const through = (via: CallVia): ToolInterceptor<SessionCallContext> => (next) => (args, ctx) => next(args, { ...ctx, via });
  return (via) => {
    let view = views.get(via);
    if (!view) {
      view = {};
      for (const [name, tool] of Object.entries(tools)) {
        Object.defineProperty(view, name, { value: Object.freeze({ ...composeTool(tool, [through(via)]), ...(tool.requiresApproval ? { requiresApproval: true } : {}) }), enumerable: true });
      }
      views.set(via, view);
    }
    return view;
  };
}

/** Why a remote tool is not in the toolbox: it can only run as a task, and our client makes plain calls. */
function taskOnlyWarning(server: string, tool: string): string {
  return `tool ${tool} of remote MCP server ${server} is left out: it runs only as a task (execution.taskSupport "required"), and subako calls tools without the tasks extension`;
}

function addSecret(secrets: Set<string>, value: string): void {
  secrets.add(value);
  // "Bearer xyz": the token alone is a secret too.
  for (const part of value.split(/\s+/)) if (part.length >= 8) secrets.add(part);
}
