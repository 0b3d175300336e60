/**
 * A session's resources, resource templates and prompts: those of its agent's remote MCP servers, each named so
 * that no server can take another's (function packages have none: ABI 1 is tools only).
 *
 * - **Prompts** are named by the tools' rule (tool-names.ts): a prompt keeps its name unless another server lists
 *   one of that name or it begins with a source's prefix, and is `<server>__<prompt>` otherwise. The rule needs
 *   every name, so each server's prompts are listed whole (at most 1000, at most 64 pages) once per toolbox
 *   (the toolbox is rebuilt every minute), and served a page at a time from that snapshot.
 * - **Resources** are named `subako-mcp://<server>/<its URI>`, or as the server wrote them when the agent version
 *   has one remote server (resource-uris.ts holds the rule and why). They are not listed ahead: a
 *   `resources/list` page is one page of one server's, in the agent's order, its cursor sealed (AES-GCM with
 *   the platform key, bound to the session) around the server's own cursor, so a client can continue a listing
 *   but never hand a server a cursor it did not give. A server that fails is skipped, and reported.
 * - **Resource templates** get the same prefix as resources (a client's expansion of one is a resource URI of
 *   that server); they are listed whole, with the prompts, so that completion knows whose template it is.
 * - **Completion** goes to the server whose prompt or template is named, with its own name for it.
 *
 * Every answer is `cacheScope: private` (a session is an authorization context of its own) and its `ttlMs` is
 * the server's, never more than a minute.
 */
import { seal, unseal, SealError } from '../../common/index.js';
import {
  CatalogCursorError, CatalogNotFoundError, isRelayableUri, pageOf, type CacheHint, type Catalog, type CatalogCapabilities, type CatalogPage, type CatalogRequestContext, type CompletionRequest,
  type CompletionResult, type GetPromptResult, type PromptEntry, type PromptMessage, type ReadResourceResult, type ResourceEntry,
  type ResourceTemplateEntry,
} from '../../mcp/index.js';
import { resourceNaming, type ResourceNaming } from './resource-uris.js';
import { publishToolNames } from './tool-names.js';

/** A remote server of the session, its catalog opened on first use. */
export interface CatalogSource {
  name: string;
  open(): Promise<Catalog>;
}

export interface SessionCatalogOptions {
  sessionId: string;
  /** The agent's remote servers, in its order. */
  sources: readonly CatalogSource[];
  /** Every source of the agent (packages too): a prompt name never begins with one's prefix but its own. */
  sourceNames: readonly string[];
  /** The platform's sealing key (listing cursors). */
  key: Buffer;
  /** Hears what the client is not told: a server left out of a listing, and why. */
  report?: (error: Error) => void;
}

/** The most prompts (and templates) of one server a session serves; the rest are left out. */
export const MAX_LISTED_PER_SERVER = 1000;
const MAX_SNAPSHOT_PAGES = 64;
/** The longest a client is told it may keep a session's listing or read. */
export const MAX_SESSION_TTL_MS = 60_000;
const PAGE_SIZE = 100;

interface ServerSnapshot {
  catalog: Catalog;
  prompts: PromptEntry[];
  templates: ResourceTemplateEntry[];
  promptsTtlMs: number;
  templatesTtlMs: number;
}

interface Snapshot {
  servers: Map<string, ServerSnapshot>;
  prompts: PromptEntry[];
  promptOwner: Map<string, { server: string; name: string }>;
  templates: ResourceTemplateEntry[];
  templateOwner: Map<string, { server: string; uriTemplate: string }>;
  promptsHint: CacheHint;
  templatesHint: CacheHint;
}

/** A cursor of `resources/list`: the server whose page comes next, and its own cursor for it. */
interface ResourceCursor {
  v: 1;
  s: string;
  c?: string;
}

const privateFor = (ttlMs: number | undefined): CacheHint => ({ ttlMs: Math.min(MAX_SESSION_TTL_MS, ttlMs ?? 0), cacheScope: 'private' });

export class SessionCatalog implements Catalog {
  readonly capabilities: CatalogCapabilities;
  private snapshot: Promise<Snapshot> | undefined;
  private readonly order: string[];
  private readonly report: (error: Error) => void;
  private readonly naming: ResourceNaming;

  constructor(private readonly options: SessionCatalogOptions) {
    // Decided by the agent version's servers, not by which of them answered: it cannot change under a session.
    this.naming = resourceNaming(options.sources.map((s) => s.name));
    const any = options.sources.length > 0;
    this.capabilities = Object.freeze({ resources: any, prompts: any, completions: any });
    this.order = options.sources.map((s) => s.name);
    this.report = options.report ?? (() => undefined);
  }

  private snap(): Promise<Snapshot> {
    // Built once, without any one request's signal: a client that goes away does not spoil it for the others.
    this.snapshot ??= this.build();
    return this.snapshot;
  }

  private async build(): Promise<Snapshot> {
    const servers = new Map<string, ServerSnapshot>();
    await Promise.all(this.options.sources.map(async (source) => {
      try {
        const catalog = await source.open();
        const prompts = catalog.capabilities.prompts ? await this.listWhole(source.name, 'prompts', (c) => catalog.listPrompts(c, {})) : { items: [], ttlMs: 0 };
        const templates = catalog.capabilities.resources
          ? await this.listWhole(source.name, 'resourceTemplates', (c) => catalog.listResourceTemplates(c, {})) : { items: [], ttlMs: 0 };
        servers.set(source.name, { catalog, prompts: prompts.items, templates: templates.items, promptsTtlMs: prompts.ttlMs, templatesTtlMs: templates.ttlMs });
      } catch (err) {
        this.report(new Error(`remote MCP server ${source.name} is left out of the session's resources and prompts: ${err instanceof Error ? err.message : String(err)}`));
      }
    }));
    const present = this.order.filter((name) => servers.has(name));
    const naming = publishToolNames([
      ...this.options.sourceNames.filter((name) => !servers.has(name)).map((source) => ({ source, tools: [] })),
      ...present.map((source) => ({ source, tools: servers.get(source)!.prompts.map((p) => p.name) })),
    ]);
    for (const warning of naming.warnings) this.report(new Error(warning.replace(/^tool /, 'prompt ')));
    const promptOf = new Map<string, PromptEntry>();
    for (const name of present) for (const prompt of servers.get(name)!.prompts) promptOf.set(`${name}\n${prompt.name}`, prompt);
    const prompts: PromptEntry[] = [];
    const promptOwner = new Map<string, { server: string; name: string }>();
    for (const { source, tool, name } of naming.published) {
      const entry = promptOf.get(`${source}\n${tool}`);
      if (!entry || promptOwner.has(name)) continue;
      prompts.push({ ...entry, name });
      promptOwner.set(name, { server: source, name: tool });
    }
    const templates: ResourceTemplateEntry[] = [];
    const templateOwner = new Map<string, { server: string; uriTemplate: string }>();
    for (const server of present) {
      for (const template of servers.get(server)!.templates) {
        const uriTemplate = this.naming.served(server, template.uriTemplate);
        if (templateOwner.has(uriTemplate)) continue;
        templates.push({ ...template, uriTemplate });
        templateOwner.set(uriTemplate, { server, uriTemplate: template.uriTemplate });
      }
    }
    const ttl = (pick: (s: ServerSnapshot) => number) => privateFor(present.length === 0 ? 0 : Math.min(...present.map((n) => pick(servers.get(n)!))));
    return { servers, prompts, promptOwner, templates, templateOwner, promptsHint: ttl((s) => s.promptsTtlMs), templatesHint: ttl((s) => s.templatesTtlMs) };
  }

  /** Every page of one of a server's listings, at most 1000 entries and 64 pages; the smallest ttlMs its pages gave. */
  private async listWhole<K extends 'prompts' | 'resourceTemplates', T>(
    server: string, key: K, list: (cursor: string | undefined) => Promise<CatalogPage<K, T>>,
  ): Promise<{ items: T[]; ttlMs: number }> {
    const items: T[] = [];
    let ttlMs = Number.POSITIVE_INFINITY;
    let cursor: string | undefined;
    for (let pages = 0; pages < MAX_SNAPSHOT_PAGES; pages += 1) {
      const page = await list(cursor);
      items.push(...(page[key] as T[]));
      ttlMs = Math.min(ttlMs, page.ttlMs ?? 0);
      if (items.length > MAX_LISTED_PER_SERVER) {
        this.report(new Error(`remote MCP server ${server} lists more than ${MAX_LISTED_PER_SERVER} ${key === 'prompts' ? 'prompts' : 'resource templates'}; the rest are left out`));
        return { items: items.slice(0, MAX_LISTED_PER_SERVER), ttlMs };
      }
      if (page.nextCursor === undefined || page.nextCursor === cursor) break;
      cursor = page.nextCursor;
    }
    return { items, ttlMs: Number.isFinite(ttlMs) ? ttlMs : 0 };
  }

  private sealCursor(cursor: ResourceCursor): string {
    return seal(JSON.stringify(cursor), { key: this.options.key, context: `subako.resources-cursor.v1:${this.options.sessionId}` });
  }

  private openCursor(cursor: string): ResourceCursor {
    try {
      const value = JSON.parse(unseal(cursor, { key: this.options.key, context: `subako.resources-cursor.v1:${this.options.sessionId}` }).reveal()) as ResourceCursor;
      if (value.v === 1 && this.order.includes(value.s) && (value.c === undefined || typeof value.c === 'string')) return value;
    } catch (err) {
      if (!(err instanceof SealError) && !(err instanceof SyntaxError)) throw err;
    }
    throw new CatalogCursorError();
  }

  async listResources(cursor: string | undefined, ctx: CatalogRequestContext): Promise<CatalogPage<'resources', ResourceEntry>> {
    const snap = await this.snap();
    const start = cursor === undefined ? { v: 1 as const, s: this.order[0] } : this.openCursor(cursor);
    let upstreamCursor = start.c;
    for (let i = this.order.indexOf(start.s); i >= 0 && i < this.order.length; i += 1, upstreamCursor = undefined) {
      const name = this.order[i];
      const server = snap.servers.get(name);
      if (!server?.catalog.capabilities.resources) continue;
      let page: CatalogPage<'resources', ResourceEntry>;
      try {
        page = await server.catalog.listResources(upstreamCursor, ctx);
      } catch (err) {
        if (ctx.signal?.aborted) throw err;
        this.report(new Error(`remote MCP server ${name} is left out of a listing of the session's resources: ${err instanceof Error ? err.message : String(err)}`));
        continue;
      }
      const following = page.nextCursor !== undefined ? { v: 1 as const, s: name, c: page.nextCursor } : this.nextWithResources(snap, i);
      // A server with nothing (more) to list gives no page of its own: the next server's first page is this one.
      if (page.resources.length === 0 && page.nextCursor === undefined) continue;
      return {
        resources: page.resources.map((r) => ({ ...r, uri: this.naming.served(name, r.uri) })), ...privateFor(page.ttlMs),
        ...(following ? { nextCursor: this.sealCursor(following) } : {}),
      };
    }
    return { resources: [], ...privateFor(0) };
  }

  private nextWithResources(snap: Snapshot, after: number): ResourceCursor | undefined {
    const next = this.order.slice(after + 1).find((name) => snap.servers.get(name)?.catalog.capabilities.resources);
    return next === undefined ? undefined : { v: 1, s: next };
  }

  async listResourceTemplates(cursor: string | undefined): Promise<CatalogPage<'resourceTemplates', ResourceTemplateEntry>> {
    const snap = await this.snap();
    const page = pageOf(snap.templates, cursor, PAGE_SIZE);
    return { resourceTemplates: page.items, ...snap.templatesHint, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  }

  async readResource(uri: string, ctx: CatalogRequestContext): Promise<ReadResourceResult> {
    const named = this.naming.parse(uri);
    const server = named === undefined ? undefined : (await this.snap()).servers.get(named.server);
    if (named === undefined || !server?.catalog.capabilities.resources) {
      throw new CatalogNotFoundError('resource', uri, `${JSON.stringify(uri.slice(0, 256))} is not a resource of this session (its resources are named ${this.naming.form})`);
    }
    const result = await server.catalog.readResource(named.uri, ctx);
    return { contents: result.contents.map((part) => ({ ...part, uri: this.naming.served(named.server, part.uri) })), ...privateFor(result.ttlMs) };
  }

  async listPrompts(cursor: string | undefined): Promise<CatalogPage<'prompts', PromptEntry>> {
    const snap = await this.snap();
    const page = pageOf(snap.prompts, cursor, PAGE_SIZE);
    return { prompts: page.items, ...snap.promptsHint, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  }

  async getPrompt(name: string, args: Record<string, string>, ctx: CatalogRequestContext): Promise<GetPromptResult> {
    const snap = await this.snap();
    const owner = snap.promptOwner.get(name);
    const server = owner === undefined ? undefined : snap.servers.get(owner.server);
    if (owner === undefined || server === undefined) throw new CatalogNotFoundError('prompt', name, `no prompt of this session is named ${JSON.stringify(name.slice(0, 128))}`);
    const result = await server.catalog.getPrompt(owner.name, args, ctx);
    return { ...result, messages: result.messages.map((message) => withSessionUris(this.naming, owner.server, message)) };
  }

  async complete(request: CompletionRequest, ctx: CatalogRequestContext): Promise<CompletionResult> {
    const snap = await this.snap();
    let target: { server: string; ref: CompletionRequest['ref'] } | undefined;
    if (request.ref.type === 'ref/prompt') {
      const owner = snap.promptOwner.get(request.ref.name);
      if (owner) target = { server: owner.server, ref: { type: 'ref/prompt', name: owner.name } };
    } else {
      const owner = snap.templateOwner.get(request.ref.uri);
      if (owner) target = { server: owner.server, ref: { type: 'ref/resource', uri: owner.uriTemplate } };
    }
    if (target === undefined) {
      const what = request.ref.type === 'ref/prompt' ? `prompt ${JSON.stringify(String(request.ref.name).slice(0, 128))}` : `resource template ${JSON.stringify(String(request.ref.uri).slice(0, 256))}`;
      throw new CatalogNotFoundError('reference', what, `this session has no ${what} to complete arguments of`);
    }
    const server = snap.servers.get(target.server)!;
    if (!server.catalog.capabilities.completions) return { completion: { values: [] } };
    return server.catalog.complete({ ref: target.ref, argument: request.argument, ...(request.context ? { context: request.context } : {}) }, ctx);
  }
}

/** A prompt message of `server`'s, any resource it embeds or links renamed as the session names that server's resources. */
function withSessionUris(naming: ResourceNaming, server: string, message: PromptMessage): PromptMessage {
  const content = message.content;
  const unusable = { ...message, content: { type: 'text', text: `[a resource that ${server} named with a URI subako does not relay]` } };
  if (content.type === 'resource_link') {
    return isRelayableUri(content.uri) ? { ...message, content: { ...content, uri: naming.served(server, content.uri) } } : unusable;
  }
  if (content.type === 'resource') {
    const resource = content.resource as { uri?: unknown } | undefined;
    if (typeof resource !== 'object' || resource === null || !isRelayableUri(resource.uri)) return unusable;
    return { ...message, content: { ...content, resource: { ...resource, uri: naming.served(server, resource.uri) } } };
  }
  return message;
}
