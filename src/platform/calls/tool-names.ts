/**
 * The rule that names an agent's tools. Every source of an agent (a package or a remote MCP server) owns the
 * names that begin with its prefix, `<source>__` (its name and two underscores): no other source can publish
 * one of them, in any letter case.
 *
 *   1. A tool keeps its own name when the name is free: no other source of the agent lists a tool of that
 *      name (letter case ignored), and the name does not begin with any source's prefix (its own included).
 *   2. Otherwise it is published as `<source>__<tool>`.
 *   3. A tool is left out, with a warning, when the name it would get is not an MCP tool name (1–128 of
 *      A–Z a–z 0–9 _ - .): a remote tool whose own name is not one, or a prefixed name over 128 characters.
 *      Sources whose prefixes overlap (`a` beside `a_` or `a__b`: see `overlappingSource`) are refused when an
 *      agent is made; should a stored agent still have them, a prefixed name that would begin with another
 *      source's prefix is left out too, and so are the tools of a source whose name repeats an earlier one.
 *
 * What follows, and what the tests check: published names are unique; a name `<s>__<t>` is only ever the
 * tool `<t>` of the source `<s>`; a tool's name depends on its source's name, its own name and whether it
 * clashes (rule 1), never on the order of the sources nor on the other sources' other tools. Calls match a
 * published name exactly (names are case-sensitive, as in MCP); letter case is ignored only in deciding what
 * is free, so no source can publish a case variant of another's name.
 */
import { isToolName, TOOL_NAME_RULE } from '../../mcp/index.js';

export interface SourceTools {
  /** The package or remote server name, as the agent names it. */
  source: string;
  tools: string[];
}

export interface PublishedName {
  source: string;
  /** The tool's name at its source. */
  tool: string;
  /** The name the agent's toolbox publishes. */
  name: string;
}

/** Why a tool is not published: data a test can match, and the sentence a person reads. */
export type LeftOutReason = 'not_a_tool_name' | 'prefixed_name_too_long' | 'inside_another_prefix' | 'duplicate_source';

export interface LeftOutTool {
  source: string;
  tool: string;
  reason: LeftOutReason;
  message: string;
}

export interface ToolNaming {
  /** In the agent's order: its sources as given, each one's tools in the order it gave them. */
  published: PublishedName[];
  leftOut: LeftOutTool[];
  /** The left-out tools as warnings for the session's tool list: at most a few per source (a remote server chooses how many tools it lists). */
  warnings: string[];
}

export const SOURCE_SEPARATOR = '__';

/** How many left-out tools of one source are named one by one; the rest are counted in one more warning. */
export const LEFT_OUT_WARNINGS_PER_SOURCE = 8;

/** The prefix a source owns, lower-cased as names are compared. */
const prefixOf = (source: string): string => `${source}${SOURCE_SEPARATOR}`.toLowerCase();

/**
 * The source among `sources` that an earlier-listed source overlaps: two sources overlap when one's prefix
 * begins with the other's (`a__` and `a___` for `a` and `a_`, `a__` and `a__b__` for `a` and `a__b`), so that
 * some name would begin with both prefixes and could not say whose tool it is. Undefined when none does.
 */
export function overlappingSource(source: string, others: readonly string[]): string | undefined {
  const mine = prefixOf(source);
  return others.find((other) => {
    const theirs = prefixOf(other);
    return other !== source && (mine.startsWith(theirs) || theirs.startsWith(mine));
  });
}

export function publishToolNames(sources: readonly SourceTools[]): ToolNaming {
  const leftOut: LeftOutTool[] = [];
  const kept: SourceTools[] = [];
  const seenSources = new Set<string>();
  for (const { source, tools } of sources) {
    if (seenSources.has(source)) {
      for (const tool of unique(tools)) leftOut.push(leave(source, tool, 'duplicate_source', `its source ${source} is listed twice`));
      continue;
    }
    seenSources.add(source);
    kept.push({ source, tools: unique(tools) });
  }

  const prefixes = kept.map(({ source }) => ({ source, prefix: prefixOf(source) }));
  const prefixOwner = (name: string, except?: string): string | undefined => {
    const lower = name.toLowerCase();
    return prefixes.find((p) => p.source !== except && lower.startsWith(p.prefix))?.source;
  };
  const listedBy = new Map<string, Set<string>>();
  for (const { source, tools } of kept) {
    for (const tool of tools) {
      const key = tool.toLowerCase();
      const set = listedBy.get(key) ?? new Set<string>();
      set.add(source);
      listedBy.set(key, set);
    }
  }

  const published: PublishedName[] = [];
  for (const { source, tools } of kept) {
    for (const tool of tools) {
      if (!isToolName(tool)) {
        leftOut.push(leave(source, tool, 'not_a_tool_name', `its name is not a tool name (${TOOL_NAME_RULE})`));
        continue;
      }
      const free = listedBy.get(tool.toLowerCase())!.size === 1 && prefixOwner(tool) === undefined;
      if (free) {
        published.push({ source, tool, name: tool });
        continue;
      }
      const name = `${source}${SOURCE_SEPARATOR}${tool}`;
      const owner = prefixOwner(name, source);
      if (owner !== undefined) {
        leftOut.push(leave(source, tool, 'inside_another_prefix', `its prefixed name ${name} would begin with ${owner}${SOURCE_SEPARATOR}, which names the tools of ${owner}`));
      } else if (!isToolName(name)) {
        leftOut.push(leave(source, tool, 'prefixed_name_too_long', `it needs the prefixed name ${source}${SOURCE_SEPARATOR}${tool}, ${name.length} characters, and a tool name is at most 128`));
      } else {
        published.push({ source, tool, name });
      }
    }
  }
  return { published, leftOut, warnings: warningsFor(leftOut) };
}

/** A source listing a tool twice publishes it once. */
function unique(tools: readonly string[]): string[] {
  return [...new Set(tools)];
}

function leave(source: string, tool: string, reason: LeftOutReason, why: string): LeftOutTool {
  return { source, tool, reason, message: `tool ${shown(tool)} of ${source} is left out: ${why}` };
}

/** A name as a warning may quote it: escaped, and cut short (a remote server chooses it). */
function shown(name: string): string {
  return JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
}

function warningsFor(leftOut: readonly LeftOutTool[]): string[] {
  const warnings: string[] = [];
  const perSource = new Map<string, number>();
  for (const entry of leftOut) {
    const count = (perSource.get(entry.source) ?? 0) + 1;
    perSource.set(entry.source, count);
    if (count <= LEFT_OUT_WARNINGS_PER_SOURCE) warnings.push(entry.message);
  }
  for (const [source, count] of perSource) {
    if (count > LEFT_OUT_WARNINGS_PER_SOURCE) warnings.push(`${count - LEFT_OUT_WARNINGS_PER_SOURCE} more tools of ${source} are left out`);
  }
  return warnings;
}
