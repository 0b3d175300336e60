/**
 * A catalog made of definitions (`defineResource`, `definePrompt`): listed a page at a time from a snapshot taken
 * when it is made, read by exact URI first and then by the first template that matches, completed by the
 * definitions' completers. What a completer answers is cut to MCP's 100 values (`total` and `hasMore` say so).
 */
import { UriTemplate } from '@modelcontextprotocol/server';
import {
  CatalogCursorError, CatalogNotFoundError, MAX_COMPLETION_VALUES, type CacheHint, type Catalog, type CatalogPage, type CompletionResult,
  type PromptEntry, type ResourceEntry, type ResourceTemplateEntry,
} from './catalog.js';
import type { CatalogDefinition, Completer, DefinedPrompt, DefinedResource, DefinedResourceTemplate } from './define-catalog.js';

const DEFAULT_PAGE_SIZE = 100;

export function encodeOffsetCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url');
}

export function decodeOffsetCursor(cursor: string | undefined, length: number): number {
  if (cursor === undefined) return 0;
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const offset = match ? Number(match[1]) : Number.NaN;
  if (!(offset <= length)) throw new CatalogCursorError();
  return offset;
}

/** One page of `items` from `cursor`, with the next page's cursor when there is one. */
export function pageOf<T>(items: readonly T[], cursor: string | undefined, pageSize: number): { items: T[]; nextCursor?: string } {
  const offset = decodeOffsetCursor(cursor, items.length);
  const end = offset + pageSize;
  return { items: items.slice(offset, end), ...(end < items.length ? { nextCursor: encodeOffsetCursor(end) } : {}) };
}

/** The hint a listing carries: the shortest time any of its entries may be kept, private unless all are public. */
function listingHint(hints: readonly (CacheHint | undefined)[]): CacheHint {
  if (hints.length === 0) return {};
  const ttls = hints.map((h) => h?.ttlMs);
  const ttlMs = ttls.every((t) => t !== undefined) ? Math.min(...(ttls as number[])) : undefined;
  const cacheScope = hints.every((h) => h?.cacheScope === 'public') ? 'public' as const : 'private' as const;
  return { ...(ttlMs !== undefined ? { ttlMs } : {}), cacheScope };
}

function omitUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** The completer of an argument, by the client's name for it: only one of the definition's own (never `constructor`). */
function ownCompleter(completers: Record<string, Completer> | undefined, argument: string): Completer | undefined {
  return completers !== undefined && Object.hasOwn(completers, argument) ? completers[argument] : undefined;
}

export function staticCatalog(definitions: readonly CatalogDefinition[], pageSize = DEFAULT_PAGE_SIZE): Catalog {
  const size = Math.max(1, pageSize);
  const resources = definitions.filter((d): d is DefinedResource => d.kind === 'resource');
  const templates = definitions.filter((d): d is DefinedResourceTemplate => d.kind === 'resource_template');
  const prompts = definitions.filter((d): d is DefinedPrompt => d.kind === 'prompt');
  const byUri = new Map<string, DefinedResource>();
  for (const r of resources) if (!byUri.has(r.uri)) byUri.set(r.uri, r);
  const byPrompt = new Map<string, DefinedPrompt>();
  for (const p of prompts) if (!byPrompt.has(p.name)) byPrompt.set(p.name, p);
  const matchers = templates.map((template) => ({ template, matcher: new UriTemplate(template.uriTemplate) }));
  const byTemplate = new Map(templates.map((t) => [t.uriTemplate, t]));

  const resourceEntries: ResourceEntry[] = [...byUri.values()].map((r) => omitUndefined({
    uri: r.uri, name: r.name, title: r.title, description: r.description, mimeType: r.mimeType, size: r.size,
  }));
  const templateEntries: ResourceTemplateEntry[] = templates.map((t) => omitUndefined({
    uriTemplate: t.uriTemplate, name: t.name, title: t.title, description: t.description, mimeType: t.mimeType,
  }));
  const promptEntries: PromptEntry[] = [...byPrompt.values()].map((p) => omitUndefined({
    name: p.name, title: p.title, description: p.description, arguments: p.arguments?.map((a) => omitUndefined({ ...a })),
  }));
  const resourcesHint = listingHint([...byUri.values()].map((r) => r.cache));
  const templatesHint = listingHint(templates.map((t) => t.cache));

  const complete = async (completer: Completer | undefined, value: string, args: Record<string, string>): Promise<CompletionResult> => {
    if (!completer) return { completion: { values: [] } };
    const all = [...await completer(value, { arguments: args })].filter((v): v is string => typeof v === 'string');
    const values = all.slice(0, MAX_COMPLETION_VALUES);
    return { completion: { values, total: all.length, hasMore: all.length > values.length } };
  };

  const catalog: Catalog = {
    capabilities: Object.freeze({
      resources: resources.length + templates.length > 0,
      prompts: prompts.length > 0,
      completions: prompts.some((p) => p.complete !== undefined) || templates.some((t) => t.complete !== undefined),
    }),
    async listResources(cursor) {
      const page = pageOf(resourceEntries, cursor, size);
      return { resources: page.items, ...resourcesHint, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) } as CatalogPage<'resources', ResourceEntry>;
    },
    async listResourceTemplates(cursor) {
      const page = pageOf(templateEntries, cursor, size);
      return { resourceTemplates: page.items, ...templatesHint, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) } as CatalogPage<'resourceTemplates', ResourceTemplateEntry>;
    },
    async readResource(uri, ctx) {
      const exact = byUri.get(uri);
      if (exact) return exact.read(uri, ctx);
      for (const { template, matcher } of matchers) {
        const variables = matcher.match(uri);
        if (variables) return template.read(uri, variables, ctx);
      }
      throw new CatalogNotFoundError('resource', uri, `no resource has the URI ${JSON.stringify(uri)}, and no resource template matches it`);
    },
    async listPrompts(cursor) {
      const page = pageOf(promptEntries, cursor, size);
      return { prompts: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) } as CatalogPage<'prompts', PromptEntry>;
    },
    async getPrompt(name, args, ctx) {
      const prompt = byPrompt.get(name);
      if (!prompt) throw new CatalogNotFoundError('prompt', name, `no prompt is named ${JSON.stringify(name)}`);
      return prompt.get(args, ctx);
    },
    async complete(request) {
      const args = request.context?.arguments ?? {};
      if (request.ref.type === 'ref/prompt') {
        const prompt = byPrompt.get(request.ref.name);
        if (!prompt) throw new CatalogNotFoundError('reference', request.ref.name, `no prompt is named ${JSON.stringify(request.ref.name)}`);
        return complete(ownCompleter(prompt.complete, request.argument.name), request.argument.value, args);
      }
      const template = byTemplate.get(request.ref.uri);
      if (!template) throw new CatalogNotFoundError('reference', request.ref.uri, `no resource template is ${JSON.stringify(request.ref.uri)}`);
      return complete(ownCompleter(template.complete, request.argument.name), request.argument.value, args);
    },
  };
  return Object.freeze(catalog);
}
