/**
 * The rule that makes an agent's tool names unique, pure and predictable.
 *
 *   1. Sources are taken in the agent's order: its packages as listed, then its remote MCP servers as listed;
 *      within a source, tools keep the order the source gave.
 *   2. A tool whose name no other source of the agent uses keeps its name.
 *   3. A name that two or more sources use is replaced, in every one of them, by `<source>__<tool>`
 *      (the package or server name, two underscores, the tool's own name).
 *   4. Should a published name still be taken (a source's own tool already has that name), `_2`, `_3`, …
 *      is appended, in source order, until it is free.
 *
 * So adding a source can rename the tools it clashes with, and only those; the rename never depends on
 * timing or on which source answered first.
 */
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

export const SOURCE_SEPARATOR = '__';

export function publishToolNames(sources: readonly SourceTools[]): PublishedName[] {
  const owners = new Map<string, Set<string>>();
  for (const { source, tools } of sources) {
    for (const tool of tools) {
      const set = owners.get(tool) ?? new Set<string>();
      set.add(source);
      owners.set(tool, set);
    }
  }
  const taken = new Set<string>();
  // Names kept as they are are reserved first, so a prefixed name never steals one of them.
  for (const [tool, set] of owners) if (set.size === 1) taken.add(tool);
  const published: PublishedName[] = [];
  const seenInSource = new Set<string>();
  for (const { source, tools } of sources) {
    for (const tool of tools) {
      const key = `${source}\u0000${tool}`;
      if (seenInSource.has(key)) continue; // a source listing a tool twice publishes it once
      seenInSource.add(key);
      if ((owners.get(tool)?.size ?? 0) === 1) {
        published.push({ source, tool, name: tool });
        continue;
      }
      const base = `${source}${SOURCE_SEPARATOR}${tool}`;
      let name = base;
      for (let n = 2; taken.has(name); n += 1) name = `${base}_${n}`;
      taken.add(name);
      published.push({ source, tool, name });
    }
  }
  return published;
}
