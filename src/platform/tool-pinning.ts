/**
 * Pinning an agent version's remote tool definitions, and what has changed since (drift). When a version is
 * published, every remote server whose definitions policy is `pin` is listed and each tool's definition pinned by
 * digest (calls/tool-pins.ts) with the version; a server that cannot be listed then refuses the publish — a version
 * that pinned nothing would either serve nothing or trust whatever it first saw, and neither is what `pin` promises
 * (`follow` publishes without listing). Drift lists each pinned server again and compares: what an operator reviews
 * and accepts into the next version.
 */
import { compareWithPins, pinSetDigest, pinsOf, remoteServerHeaders } from './calls/index.js';
import { UpstreamError } from './errors.js';
import type { RemoteMcp } from './remote-mcp.js';
import type { AgentSpec, PinnedDefinition, ToolPin } from './store/index.js';
import type { VaultService } from './vaults.js';

/** The most tools of one server pinned; a server listing more is refused at publish (it is not a toolbox anyone reviews). */
export const MAX_PINNED_TOOLS_PER_SERVER = 2000;

/** A definition with its digest, as the API shows it. */
export interface DigestedDefinition {
  digest: string;
  definition: PinnedDefinition;
}

/** One pinned server's drift: what its listing adds, changes and removes against the version's pins. */
export interface ServerDriftReport {
  server: string;
  /** `unreachable`: the server could not be listed now (`error` says why); nothing else is known. */
  status: 'ok' | 'unreachable';
  error?: string;
  added: (DigestedDefinition & { name: string })[];
  changed: { name: string; fields: string[]; pinned: DigestedDefinition; listed: DigestedDefinition }[];
  removed: (DigestedDefinition & { name: string })[];
}

export interface AgentDrift {
  agentId: string;
  /** The version compared (the agent's current one). */
  version: number;
  servers: ServerDriftReport[];
  /** Whether any server's listing differs from its pins. */
  drifted: boolean;
  /** The digest of the pins accepting would publish: what an accept must name, so it accepts exactly what was reviewed. */
  digest: string;
  /** The pins accepting would publish (every pinned server's tools as listed now). */
  pins: ToolPin[];
}

export class ToolPinning {
  constructor(private readonly remote: RemoteMcp, private readonly vaults: Pick<VaultService, 'credentialFor'>) {}

  /**
   * The pins of a spec's `pin` servers (those `fresh` picks, all by default), as they list now; throws UpstreamError
   * naming a server that cannot be listed.
   */
  async pin(spec: AgentSpec, fresh: (server: string) => boolean = () => true): Promise<ToolPin[]> {
    const pins: ToolPin[] = [];
    for (const [i, server] of spec.mcp_servers.entries()) {
      if (server.definitions !== 'pin' || !fresh(server.name)) continue;
      const listed = await this.list(server).catch((err: unknown) => {
        throw new UpstreamError(
          `mcp_servers[${i}]: remote MCP server ${server.name} could not be listed to pin its tool definitions (${reason(err)}); ` +
          'publish again once it answers, or set "definitions": "follow" for it to serve whatever it lists, unpinned',
          'agent.pin_unreachable',
        );
      });
      pins.push(...listed);
    }
    return pins;
  }

  /** Each `pin` server's listing now against the version's pins. */
  async drift(agentId: string, version: number, spec: AgentSpec, pinned: readonly ToolPin[]): Promise<AgentDrift> {
    const servers: ServerDriftReport[] = [];
    const pins: ToolPin[] = [];
    for (const server of spec.mcp_servers) {
      if (server.definitions !== 'pin') continue;
      const empty = { server: server.name, added: [], changed: [], removed: [] };
      let now: ToolPin[];
      try {
        now = await this.list(server);
      } catch (err) {
        servers.push({ ...empty, status: 'unreachable', error: reason(err) });
        pins.push(...pinned.filter((p) => p.server === server.name));
        continue;
      }
      pins.push(...now);
      const byName = new Map(now.map((p) => [p.tool, p]));
      const drift = compareWithPins(server.name, pinned, now.map((p) => ({ ...p.definition, call: noCall })));
      servers.push({
        server: server.name, status: 'ok',
        added: drift.added.map(({ listed }) => ({ name: listed.tool, digest: listed.digest, definition: listed.definition })),
        changed: drift.changed.map((c) => ({ name: c.pin.tool, fields: c.fields, pinned: digested(c.pin), listed: digested(byName.get(c.pin.tool)!) })),
        removed: drift.removed.map((pin) => ({ name: pin.tool, ...digested(pin) })),
      });
    }
    const drifted = servers.some((s) => s.added.length > 0 || s.changed.length > 0 || s.removed.length > 0);
    return { agentId, version, servers, drifted, digest: pinSetDigest(pins), pins };
  }

  private async list(server: AgentSpec['mcp_servers'][number]): Promise<ToolPin[]> {
    const tools = Object.values(await this.remote.tools(server.url, await remoteServerHeaders(this.vaults, server)));
    if (tools.length > MAX_PINNED_TOOLS_PER_SERVER) throw new Error(`it lists ${tools.length} tools, more than the ${MAX_PINNED_TOOLS_PER_SERVER} that can be pinned`);
    return pinsOf(server.name, tools);
  }
}

const noCall = (): Promise<never> => Promise.reject(new Error('a definition is not called'));

function digested(pin: ToolPin): DigestedDefinition {
  return { digest: pin.digest, definition: pin.definition };
}

function reason(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0].slice(0, 300);
}
