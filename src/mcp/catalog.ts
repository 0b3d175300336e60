/**
 * What an MCP server offers besides tools — resources, resource templates, prompts and completion of their
 * arguments — as one narrow interface, `Catalog`, that the serving side (toolbox-server.ts) answers from. Two
 * kinds of catalog exist: one made of definitions (`defineResource`, `definePrompt`: static-catalog.ts), and a
 * remote server's (remote-catalog.ts), which the platform composes per session, renaming each server's entries.
 *
 * A catalog answers pages: `cursor` is the one its last page gave (opaque to the client), undefined for the first.
 * Each listing and each read may carry the 2026-07-28 caching hints (`ttlMs`, `cacheScope`); a catalog that says
 * nothing gets the SDK's defaults (0 ms, `private`).
 */
import { SubakoError } from '../errors.js';
import type { CallerInput } from '../tool.js';

/** How long a client may keep a result, and whether it may share it across authorization contexts. */
export interface CacheHint {
  ttlMs?: number;
  cacheScope?: 'public' | 'private';
}

/** A resource as `resources/list` describes it. */
export interface ResourceEntry {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: Record<string, unknown>;
}

/** A resource template as `resources/templates/list` describes it (RFC 6570 `uriTemplate`). */
export interface ResourceTemplateEntry {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: Record<string, unknown>;
}

export interface PromptArgumentEntry {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
}

/** A prompt as `prompts/list` describes it. */
export interface PromptEntry {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgumentEntry[];
}

/** One part of a resource's contents: text, or base64 `blob`. */
export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
  _meta?: Record<string, unknown>;
}

export interface ReadResourceResult extends CacheHint {
  contents: ResourceContents[];
}

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: { type: string; [key: string]: unknown };
}

export interface GetPromptResult {
  description?: string;
  messages: PromptMessage[];
}

/** What `completion/complete` completes: a prompt's argument, or a resource template's variable. */
export type CompletionRef = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };

export interface CompletionRequest {
  ref: CompletionRef;
  argument: { name: string; value: string };
  /** Arguments already given (a prompt's others, a template's other variables). */
  context?: { arguments?: Record<string, string> };
}

export interface CompletionResult {
  completion: { values: string[]; total?: number; hasMore?: boolean };
}

/** MCP's cap on the values of one completion. */
export const MAX_COMPLETION_VALUES = 100;

export type CatalogPage<K extends string, T> = { [key in K]: T[] } & CacheHint & { nextCursor?: string };

/** What a catalog's operation knows of its request. */
export interface CatalogRequestContext {
  /** Aborts when the client went away. */
  signal?: AbortSignal;
  /** The request's W3C trace context (`_meta.traceparent`), to pass on upstream. */
  traceparent?: string;
  /**
   * On `prompts/get` and `resources/read` of a 2026-07-28 client: what it declared it can answer, and on a retry its
   * answers and the state given with the question. A prompt or resource that needs input throws
   * ToolInputRequiredError, as a tool does.
   */
  input?: CallerInput;
}

/** What a catalog serves at all: its server declares these capabilities. */
export interface CatalogCapabilities {
  resources: boolean;
  prompts: boolean;
  completions: boolean;
}

export interface Catalog {
  readonly capabilities: CatalogCapabilities;
  listResources(cursor: string | undefined, ctx: CatalogRequestContext): Promise<CatalogPage<'resources', ResourceEntry>>;
  listResourceTemplates(cursor: string | undefined, ctx: CatalogRequestContext): Promise<CatalogPage<'resourceTemplates', ResourceTemplateEntry>>;
  /** Rejects with CatalogNotFoundError when no resource has this URI. */
  readResource(uri: string, ctx: CatalogRequestContext): Promise<ReadResourceResult>;
  listPrompts(cursor: string | undefined, ctx: CatalogRequestContext): Promise<CatalogPage<'prompts', PromptEntry>>;
  /** Rejects with CatalogNotFoundError when no prompt has this name. */
  getPrompt(name: string, args: Record<string, string>, ctx: CatalogRequestContext): Promise<GetPromptResult>;
  complete(request: CompletionRequest, ctx: CatalogRequestContext): Promise<CompletionResult>;
}

export const CATALOG_NOT_FOUND = 'catalog.not_found';
export const CATALOG_BAD_CURSOR = 'catalog.bad_cursor';

/** A resource, template or prompt that the catalog does not have (answered as invalid params, as the spec says). */
export class CatalogNotFoundError extends SubakoError {
  constructor(readonly what: 'resource' | 'prompt' | 'reference', readonly key: string, message: string) {
    super(CATALOG_NOT_FOUND, message);
  }
}

/** A cursor this catalog did not give (or one past its pages). */
export class CatalogCursorError extends SubakoError {
  constructor(message = 'the cursor was not given by this server (pass the nextCursor of the previous page, or none for the first)') {
    super(CATALOG_BAD_CURSOR, message);
  }
}

/** The empty catalog: what a toolbox without resources or prompts serves (and declares none of). */
export const EMPTY_CATALOG: Catalog = Object.freeze({
  capabilities: Object.freeze({ resources: false, prompts: false, completions: false }),
  listResources: async () => ({ resources: [] }),
  listResourceTemplates: async () => ({ resourceTemplates: [] }),
  readResource: async (uri: string) => { throw new CatalogNotFoundError('resource', uri, `no resource has the URI ${JSON.stringify(uri)}`); },
  listPrompts: async () => ({ prompts: [] }),
  getPrompt: async (name: string) => { throw new CatalogNotFoundError('prompt', name, `no prompt is named ${JSON.stringify(name)}`); },
  complete: async () => ({ completion: { values: [] } }),
});
