/**
 * A remote MCP server's resources, resource templates and prompts as a Catalog: each operation one request on
 * the shared connection for its descriptor (as a remote tool's call is), its answer read under the pool's cap
 * and checked entry by entry (catalog-entries.ts) — what a server lists is not trusted. Listings are one of the
 * server's pages each (its cursor passed back as it gave it, when of a sane length); nothing is cached here (the
 * client reading the catalog caches by the hints). `mcp.catalog({ url, auth })` makes one.
 */
import type { Client } from '@modelcontextprotocol/client';
import {
  CatalogCursorError, type Catalog, type CatalogCapabilities, type CatalogPage, type CatalogRequestContext, type CompletionRequest,
  type PromptEntry, type ResourceEntry, type ResourceTemplateEntry,
} from './catalog.js';
import {
  cacheHintOf, completionResultOf, entriesOf, promptEntryOf, promptResultOf, readResultOf, resourceEntryOf, resourceTemplateEntryOf,
} from './catalog-entries.js';
import type { Descriptor, McpClientPool } from './connection.js';
import { TRACEPARENT } from './trace-context.js';
import { McpInputRequiredError, McpServerError } from './errors.js';
import { checkInputRequests } from './input-requests.js';
import { describeInputRequests, isInputRequired, requestMeta } from './input-rounds.js';

/** The longest cursor a server may give that is passed back to it. */
export const MAX_CURSOR_CHARS = 4096;

const LISTED = { resources: 'resources', resourceTemplates: 'resource templates', prompts: 'prompts' } as const;

type Method = 'resources/list' | 'resources/templates/list' | 'resources/read' | 'prompts/list' | 'prompts/get' | 'completion/complete';

export class RemoteCatalog implements Catalog {
  private constructor(
    private readonly descriptor: Descriptor,
    private readonly pool: McpClientPool,
    readonly capabilities: CatalogCapabilities,
  ) {
    Object.freeze(this);
  }

  /** Connects (or shares the connection) and reads what the server declares it serves. */
  static async open(descriptor: Descriptor, pool: McpClientPool, ctx: { signal?: AbortSignal } = {}): Promise<RemoteCatalog> {
    const declared = await pool.use(descriptor, { operation: 'read its capabilities', signal: ctx.signal }, async (client) => client.getServerCapabilities() ?? {});
    return new RemoteCatalog(descriptor, pool, Object.freeze({
      resources: declared.resources !== undefined, prompts: declared.prompts !== undefined, completions: declared.completions !== undefined,
    }));
  }

  get url(): string {
    return this.descriptor.url;
  }

  private request(method: Method, operation: string, params: Record<string, unknown>, ctx: CatalogRequestContext): Promise<unknown> {
    const meta = ctx.traceparent !== undefined ? { _meta: { [TRACEPARENT]: ctx.traceparent } } : {};
    return this.pool.use(this.descriptor, { operation, signal: ctx.signal }, (client: Client) =>
      client.request({ method, params: { ...params, ...meta } } as never, { signal: ctx.signal, timeout: this.pool.timeoutMs }) as Promise<unknown>);
  }

  private async page<K extends 'resources' | 'resourceTemplates' | 'prompts', T>(
    method: Method, key: K, check: (item: unknown) => T | undefined, cursor: string | undefined, ctx: CatalogRequestContext,
  ): Promise<CatalogPage<K, T>> {
    if (cursor !== undefined && (cursor.length === 0 || cursor.length > MAX_CURSOR_CHARS)) throw new CatalogCursorError();
    const raw = (await this.request(method, `list its ${LISTED[key]}`, cursor !== undefined ? { cursor } : {}, ctx)) as Record<string, unknown>;
    const next = raw?.nextCursor;
    return {
      [key]: entriesOf(raw?.[key], check), ...cacheHintOf(raw),
      ...(typeof next === 'string' && next.length > 0 && next.length <= MAX_CURSOR_CHARS ? { nextCursor: next } : {}),
    } as CatalogPage<K, T>;
  }

  listResources(cursor: string | undefined, ctx: CatalogRequestContext): Promise<CatalogPage<'resources', ResourceEntry>> {
    return this.page('resources/list', 'resources', resourceEntryOf, cursor, ctx);
  }

  listResourceTemplates(cursor: string | undefined, ctx: CatalogRequestContext): Promise<CatalogPage<'resourceTemplates', ResourceTemplateEntry>> {
    return this.page('resources/templates/list', 'resourceTemplates', resourceTemplateEntryOf, cursor, ctx);
  }

  listPrompts(cursor: string | undefined, ctx: CatalogRequestContext): Promise<CatalogPage<'prompts', PromptEntry>> {
    return this.page('prompts/list', 'prompts', promptEntryOf, cursor, ctx);
  }

  /**
   * A request that may ask its client for input (`resources/read`, `prompts/get`): it declares what `ctx.input`
   * accepts and carries the answers and the server's own state of a retry; a server's question comes back as
   * McpInputRequiredError (what was asked, its state) for the caller to relay — subako answers none itself.
   */
  private async asking(method: 'resources/read' | 'prompts/get', operation: string, params: Record<string, unknown>, ctx: CatalogRequestContext): Promise<unknown> {
    const input = ctx.input;
    const { _meta: meta } = requestMeta(ctx.traceparent, input?.accepts);
    const full = {
      ...params, ...(meta !== undefined ? { _meta: meta } : {}),
      ...(input?.responses !== undefined ? { inputResponses: input.responses } : {}),
      ...(input?.requestState !== undefined ? { requestState: input.requestState } : {}),
    };
    const answer = await this.pool.use(this.descriptor, { operation, signal: ctx.signal }, (client: Client) =>
      client.request({ method, params: full } as never, { signal: ctx.signal, timeout: this.pool.timeoutMs, allowInputRequired: true } as never) as Promise<unknown>);
    if (!isInputRequired(answer)) return answer;
    const checked = checkInputRequests(answer.inputRequests, answer.requestState);
    const url = this.descriptor.url;
    if (!checked.ok) throw new McpServerError('protocol', `the MCP server at ${url} asked for input to ${operation} in a way subako does not relay: ${checked.problem}`, { url });
    throw new McpInputRequiredError(
      `the MCP server at ${url} needs input to ${operation} (${describeInputRequests(checked.requests)})`, checked.requests, answer.requestState as string | undefined, { url },
    );
  }

  async readResource(uri: string, ctx: CatalogRequestContext) {
    return readResultOf(await this.asking('resources/read', `read the resource ${JSON.stringify(uri.slice(0, 256))}`, { uri }, ctx));
  }

  async getPrompt(name: string, args: Record<string, string>, ctx: CatalogRequestContext) {
    return promptResultOf(await this.asking('prompts/get', `get the prompt ${JSON.stringify(name.slice(0, 128))}`, { name, arguments: args }, ctx));
  }

  async complete(request: CompletionRequest, ctx: CatalogRequestContext) {
    const params = { ref: request.ref, argument: request.argument, ...(request.context ? { context: request.context } : {}) };
    return completionResultOf(await this.request('completion/complete', 'complete an argument', params, ctx));
  }
}
