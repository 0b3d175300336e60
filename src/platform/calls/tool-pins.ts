/**
 * Pinned tool definitions (protection from a remote server that changes its tools after they were trusted): the
 * definition of each tool a remote server lists — what a client is shown of it: name, title, description, schemas,
 * annotations, icons — is pinned with an agent version by the sha-256 of its canonical JSON. Against those pins a
 * later listing is sorted into the tools served (the same digest), those changed (withheld until an operator
 * accepts them into a new agent version), those added (likewise) and those removed. Pure functions.
 */
import { createHash } from 'node:crypto';
import { toolDefinition, type Tool } from '../../tool.js';
import type { PinnedDefinition, ToolPin } from '../store/index.js';
import { canonicalJson } from './approvals.js';

/** The definition of a tool as a client is shown it, and so as it is pinned. */
export function pinnedDefinitionOf(tool: Tool): PinnedDefinition {
  // The icons are copied: a pin must not change when the listing's objects do.
  const { icons, ...definition } = toolDefinition(tool.name, tool);
  return { ...definition, ...(icons !== undefined ? { icons: icons.map((icon) => ({ ...icon })) } : {}) };
}

/** The sha-256 (hex) of a definition's canonical JSON: key order never matters, anything else does. */
export function definitionDigest(definition: PinnedDefinition): string {
  return createHash('sha256').update(canonicalJson(definition), 'utf8').digest('hex');
}

/** The pins of one server's listed tools. */
export function pinsOf(server: string, tools: readonly Tool[]): ToolPin[] {
  return tools.map((tool) => {
    const definition = pinnedDefinitionOf(tool);
    return { server, tool: tool.name, digest: definitionDigest(definition), definition };
  });
}

/** A tool whose listed definition differs from its pin. */
export interface ChangedTool {
  tool: Tool;
  pin: ToolPin;
  listed: ToolPin;
  /** Which fields differ (`description`, `inputSchema`, …). */
  fields: string[];
}

/** One server's listing against its pins. */
export interface ServerDrift {
  /** Listed exactly as pinned: served. */
  unchanged: Tool[];
  changed: ChangedTool[];
  /** Listed, never pinned: not served until accepted. */
  added: { tool: Tool; listed: ToolPin }[];
  /** Pinned, no longer listed. */
  removed: ToolPin[];
}

/** Sorts a server's listing against the pins of that server. */
export function compareWithPins(server: string, pins: readonly ToolPin[], listed: readonly Tool[]): ServerDrift {
  const pinned = new Map(pins.filter((p) => p.server === server).map((p) => [p.tool, p]));
  const drift: ServerDrift = { unchanged: [], changed: [], added: [], removed: [] };
  const seen = new Set<string>();
  for (const tool of listed) {
    seen.add(tool.name);
    const [current] = pinsOf(server, [tool]);
    const pin = pinned.get(tool.name);
    if (!pin) drift.added.push({ tool, listed: current });
    else if (pin.digest === current.digest) drift.unchanged.push(tool);
    else drift.changed.push({ tool, pin, listed: current, fields: changedFields(pin.definition, current.definition) });
  }
  for (const pin of pinned.values()) if (!seen.has(pin.tool)) drift.removed.push(pin);
  return drift;
}

export function hasDrift(drift: ServerDrift): boolean {
  return drift.changed.length > 0 || drift.added.length > 0 || drift.removed.length > 0;
}

/** The fields of two definitions whose canonical JSON differs, in a stable order. */
export function changedFields(before: PinnedDefinition, after: PinnedDefinition): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.filter((key) => canonicalJson((before as never)[key]) !== canonicalJson((after as never)[key]));
}

/** What a call of a withheld tool is told: which tool, what changed, and how an operator lets it through. */
export function withheldMessage(name: string, server: string, fields: readonly string[], agentId: string): string {
  return `tool ${name} is withheld: remote MCP server ${server} now lists a changed definition of it (${fields.join(', ')}) ` +
    `that this agent version did not pin; an operator reviews it at GET /v1/agents/${agentId}/drift and accepts it into a new agent version ` +
    `(POST /v1/agents/${agentId}/drift/accept), which new sessions then serve`;
}

/** The one line a session's tool list warns with about a server's drift. */
export function driftWarning(server: string, drift: ServerDrift, agentId: string): string {
  const parts = [
    ...(drift.changed.length > 0 ? [`${drift.changed.length} changed (${drift.changed.map((c) => c.tool.name).join(', ')})`] : []),
    ...(drift.added.length > 0 ? [`${drift.added.length} added (${drift.added.map((a) => a.tool.name).join(', ')})`] : []),
  ];
  return `remote MCP server ${server} lists tool definitions this agent version did not pin: ${parts.join(' and ')}; ` +
    `they are withheld until an operator accepts them (GET /v1/agents/${agentId}/drift)`;
}

/** One digest of a set of pins (what an operator saw and accepts), whatever their order. */
export function pinSetDigest(pins: readonly ToolPin[]): string {
  const lines = pins.map((p) => `${p.server}\u0000${p.tool}\u0000${p.digest}`).sort();
  return createHash('sha256').update(lines.join('\n'), 'utf8').digest('hex');
}
