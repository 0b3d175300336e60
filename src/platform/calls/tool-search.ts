/**
 * Fewer tokens: an agent whose discovery is `search` lists a few entry tools and `search_tools`, which finds the
 * session's other tools by words in their names, titles and descriptions and returns their definitions, so the
 * client can call them by name without the whole list in its context. The ranking is pure and bounded.
 */
import { toolDescriptor } from '../../mcp/index.js';
import type { CallToolResult, Tool } from '../../tool.js';

export const SEARCH_TOOL_NAME = 'search_tools';
export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 50;
const MAX_QUERY_CHARS = 500;
const MAX_TERMS = 16;

/** A query's words: lower-cased, split on anything but letters and digits (as names split on `_`, `-`, `.`). */
function termsOf(text: string): string[] {
  return [...new Set(text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((t) => t.length > 0))].slice(0, MAX_TERMS);
}

/**
 * How well a tool matches the terms: a whole word of its name counts most, then part of its name, its title, its
 * description. Zero: no term matched.
 */
export function searchScore(tool: Pick<Tool, 'name' | 'title' | 'description'>, terms: readonly string[]): number {
  const name = tool.name.toLowerCase();
  const nameWords = new Set(termsOf(tool.name));
  const title = (tool.title ?? '').toLowerCase();
  const description = (tool.description ?? '').toLowerCase();
  let score = 0;
  for (const term of terms) {
    if (nameWords.has(term)) score += 4;
    else if (name.includes(term)) score += 3;
    if (title.includes(term)) score += 2;
    if (description.includes(term)) score += 1;
  }
  return score;
}

/** The best `limit` matches, best first, ties by name. */
export function searchTools<T extends Pick<Tool, 'name' | 'title' | 'description'>>(tools: Iterable<T>, query: string, limit: number): T[] {
  const terms = termsOf(query);
  if (terms.length === 0) return [];
  const scored: { tool: T; score: number }[] = [];
  for (const tool of tools) {
    const score = searchScore(tool, terms);
    if (score > 0) scored.push({ tool, score });
  }
  scored.sort((a, b) => b.score - a.score || (a.tool.name < b.tool.name ? -1 : a.tool.name > b.tool.name ? 1 : 0));
  return scored.slice(0, limit).map((s) => s.tool);
}

/** The `search_tools` tool over a session's served tools (by their served names). */
export function searchToolsTool(served: () => Record<string, Tool>): Tool {
  return Object.freeze({
    name: SEARCH_TOOL_NAME,
    title: 'Search tools',
    description: 'Finds this session\'s tools by words in their names, titles and descriptions, best match first, and returns their ' +
      'definitions (name, description, input schema, annotations). Call a tool it finds by its name. Not every tool is listed: search first.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: MAX_QUERY_CHARS, description: 'Words to look for, e.g. "create issue".' },
        limit: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_LIMIT, default: DEFAULT_SEARCH_LIMIT, description: 'The most tools to return.' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    outputSchema: { type: 'object', properties: { tools: { type: 'array', items: { type: 'object' } } }, required: ['tools'] },
    annotations: { readOnlyHint: true, openWorldHint: false },
    source: { kind: 'subako' },
    async call(args: Record<string, unknown>): Promise<CallToolResult> {
      const { query, limit } = args;
      if (typeof query !== 'string' || query.length === 0 || query.length > MAX_QUERY_CHARS) {
        return refusal(`query must be a string of 1-${MAX_QUERY_CHARS} characters`);
      }
      if (limit !== undefined && (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_SEARCH_LIMIT)) {
        return refusal(`limit must be a whole number from 1 to ${MAX_SEARCH_LIMIT}`);
      }
      const tools = served();
      const found = searchTools(Object.entries(tools).map(([name, tool]) => ({ ...tool, name })), query, (limit as number | undefined) ?? DEFAULT_SEARCH_LIMIT);
      const definitions = found.map((tool) => toolDescriptor(tool.name, tool));
      return { content: [{ type: 'text', text: JSON.stringify({ tools: definitions }) }], structuredContent: { tools: definitions } };
    },
  });
}

function refusal(message: string): CallToolResult {
  return { content: [{ type: 'text', text: `search_tools: ${message}` }], isError: true };
}
