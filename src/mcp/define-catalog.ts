/**
 * `defineResource` and `definePrompt`: TypeScript functions as a server's resources, resource templates and
 * prompts, served beside tools by `mcp.serve` (entries of the same record as the tools) or `createToolboxHandler`.
 *
 * - `defineResource({ uri, name, read })`: one resource; `defineResource({ uriTemplate, name, read, complete })`: a
 *   template (RFC 6570) whose matching URIs are read by `read(uri, variables)`, its variables completed by `complete`.
 * - `definePrompt({ name, arguments, get, complete })`: a prompt; `get(args)` answers its messages.
 *
 * What `read` returns becomes the contents: a string is one text part (with the definition's `mimeType`), bytes
 * one base64 blob part, `{ contents: [...] }` the parts as given. What `get` returns: a string is one user
 * message, an array the messages, `{ messages, description? }` the result as given. A thrown error reaches the
 * client as a JSON-RPC error with its message.
 */
import type {
  CacheHint, CatalogRequestContext, GetPromptResult, PromptArgumentEntry, PromptMessage, ReadResourceResult, ResourceContents,
} from './catalog.js';

/** Completes one argument (or template variable): the values that begin with what was typed, at most 100 used. */
export type Completer = (value: string, context: { arguments: Record<string, string> }) => readonly string[] | Promise<readonly string[]>;

/** What `read` may answer. */
export type ResourceBody = string | Uint8Array | { contents: ResourceContents[] };

interface ResourceCommon {
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Caching hints served with its reads (and, for the listing, the smallest of all). */
  cache?: CacheHint;
}

export interface DefineResourceOptions extends ResourceCommon {
  uri: string;
  size?: number;
  read: (uri: string, ctx: CatalogRequestContext) => ResourceBody | Promise<ResourceBody>;
}

export interface DefineResourceTemplateOptions extends ResourceCommon {
  uriTemplate: string;
  read: (uri: string, variables: Record<string, string | string[]>, ctx: CatalogRequestContext) => ResourceBody | Promise<ResourceBody>;
  /** Per variable, its completer (`completion/complete` with a `ref/resource` of this template). */
  complete?: Record<string, Completer>;
}

export interface DefinedResource extends Readonly<Omit<DefineResourceOptions, 'read'>> {
  readonly kind: 'resource';
  read(uri: string, ctx: CatalogRequestContext): Promise<ReadResourceResult>;
}

export interface DefinedResourceTemplate extends Readonly<Omit<DefineResourceTemplateOptions, 'read'>> {
  readonly kind: 'resource_template';
  read(uri: string, variables: Record<string, string | string[]>, ctx: CatalogRequestContext): Promise<ReadResourceResult>;
}

export interface DefinePromptOptions {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgumentEntry[];
  get: (args: Record<string, string>, ctx: CatalogRequestContext) => string | PromptMessage[] | GetPromptResult | Promise<string | PromptMessage[] | GetPromptResult>;
  /** Per argument, its completer (`completion/complete` with a `ref/prompt` of this prompt). */
  complete?: Record<string, Completer>;
}

export interface DefinedPrompt extends Readonly<Omit<DefinePromptOptions, 'get'>> {
  readonly kind: 'prompt';
  get(args: Record<string, string>, ctx: CatalogRequestContext): Promise<GetPromptResult>;
}

export type CatalogDefinition = DefinedResource | DefinedResourceTemplate | DefinedPrompt;

/** A missing or malformed prompt argument: the client's mistake, answered as invalid params. */
export class PromptArgumentError extends TypeError {
  readonly code = 'prompt.arguments';
}

function need(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`${what} must be a non-empty string`);
  return value;
}

function contentsOf(uri: string, mimeType: string | undefined, body: ResourceBody): ResourceContents[] {
  const mime = mimeType !== undefined ? { mimeType } : {};
  if (typeof body === 'string') return [{ uri, ...mime, text: body }];
  if (body instanceof Uint8Array) return [{ uri, ...mime, blob: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('base64') }];
  if (typeof body === 'object' && body !== null && Array.isArray(body.contents)) return body.contents;
  throw new TypeError(`the resource ${uri} was read as neither a string, bytes nor { contents: [...] }`);
}

function withHint(contents: ResourceContents[], cache: CacheHint | undefined): ReadResourceResult {
  return { contents, ...(cache?.ttlMs !== undefined ? { ttlMs: cache.ttlMs } : {}), ...(cache?.cacheScope !== undefined ? { cacheScope: cache.cacheScope } : {}) };
}

function checkCache(cache: CacheHint | undefined, what: string): void {
  if (cache?.ttlMs !== undefined && !(Number.isSafeInteger(cache.ttlMs) && cache.ttlMs >= 0)) throw new TypeError(`${what}: cache.ttlMs must be a non-negative integer`);
  if (cache?.cacheScope !== undefined && cache.cacheScope !== 'public' && cache.cacheScope !== 'private') throw new TypeError(`${what}: cache.cacheScope must be "public" or "private"`);
}

export function defineResource(options: DefineResourceOptions): DefinedResource;
export function defineResource(options: DefineResourceTemplateOptions): DefinedResourceTemplate;
export function defineResource(options: DefineResourceOptions | DefineResourceTemplateOptions): DefinedResource | DefinedResourceTemplate {
  const name = need(options.name, 'a resource\'s name');
  checkCache(options.cache, `resource ${name}`);
  if (typeof options.read !== 'function') throw new TypeError(`resource ${name} needs a read function`);
  const hasUri = 'uri' in options && options.uri !== undefined;
  const hasTemplate = 'uriTemplate' in options && options.uriTemplate !== undefined;
  if (hasUri === hasTemplate) throw new TypeError(`resource ${name} needs exactly one of uri (one resource) or uriTemplate (a template)`);
  if (hasUri) {
    const { read, ...rest } = options as DefineResourceOptions;
    const uri = need(rest.uri, `resource ${name}'s uri`);
    if (!URL.canParse(uri)) throw new TypeError(`resource ${name}'s uri ${JSON.stringify(uri)} is not a URI (it needs a scheme, such as file:// or https://)`);
    return Object.freeze({
      ...rest, kind: 'resource' as const,
      read: async (asked: string, ctx: CatalogRequestContext) => withHint(contentsOf(asked, rest.mimeType, await read(asked, ctx)), rest.cache),
    });
  }
  const { read, ...rest } = options as DefineResourceTemplateOptions;
  need(rest.uriTemplate, `resource template ${name}'s uriTemplate`);
  return Object.freeze({
    ...rest, kind: 'resource_template' as const,
    read: async (asked: string, variables: Record<string, string | string[]>, ctx: CatalogRequestContext) =>
      withHint(contentsOf(asked, rest.mimeType, await read(asked, variables, ctx)), rest.cache),
  });
}

export function definePrompt(options: DefinePromptOptions): DefinedPrompt {
  const name = need(options.name, 'a prompt\'s name');
  if (typeof options.get !== 'function') throw new TypeError(`prompt ${name} needs a get function`);
  for (const argument of options.arguments ?? []) need(argument?.name, `an argument of prompt ${name}: its name`);
  const { get, ...rest } = options;
  const required = (options.arguments ?? []).filter((a) => a.required === true).map((a) => a.name);
  return Object.freeze({
    ...rest, kind: 'prompt' as const,
    get: async (args: Record<string, string>, ctx: CatalogRequestContext): Promise<GetPromptResult> => {
      const missing = required.filter((argument) => typeof args[argument] !== 'string');
      if (missing.length > 0) throw new PromptArgumentError(`prompt ${name} needs the argument${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
      const answer = await get(args, ctx);
      if (typeof answer === 'string') return { messages: [{ role: 'user', content: { type: 'text', text: answer } }] };
      if (Array.isArray(answer)) return { messages: answer };
      if (typeof answer === 'object' && answer !== null && Array.isArray(answer.messages)) return answer;
      throw new TypeError(`prompt ${name} answered neither a string, messages nor { messages: [...] }`);
    },
  });
}

/** Whether a toolbox entry is one of these definitions (and not a tool). */
export function isCatalogDefinition(value: unknown): value is CatalogDefinition {
  const kind = (value as { kind?: unknown } | null)?.kind;
  return typeof value === 'object' && value !== null && typeof (value as { call?: unknown }).call !== 'function'
    && (kind === 'resource' || kind === 'resource_template' || kind === 'prompt');
}
