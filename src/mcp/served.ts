/**
 * What `mcp.serve` and `createToolboxHandler` take: a toolbox whose entries may also be resources, resource
 * templates and prompts (`defineResource`, `definePrompt`). Tools are served under their keys, as always;
 * definitions under their own names and URIs (their keys are only handles).
 */
import type { Tool, Toolbox } from '../tool.js';
import { isCatalogDefinition, type CatalogDefinition } from './define-catalog.js';

export type ServedToolbox = Record<string, Tool | CatalogDefinition>;

/** The tools of a served toolbox, keyed as given, and its definitions in the order given. */
export function partitionServed(served: ServedToolbox): { toolbox: Toolbox; definitions: CatalogDefinition[] } {
  const toolbox: Toolbox = {};
  const definitions: CatalogDefinition[] = [];
  for (const [key, entry] of Object.entries(served)) {
    if (isCatalogDefinition(entry)) definitions.push(entry);
    else if (typeof (entry as Tool | null)?.call === 'function') Object.defineProperty(toolbox, key, { value: entry, enumerable: true });
    else throw new TypeError(`the entry ${JSON.stringify(key)} is neither a tool nor a resource or prompt (make it with defineTool, defineResource or definePrompt)`);
  }
  return { toolbox, definitions };
}
