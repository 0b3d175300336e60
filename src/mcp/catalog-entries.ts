/**
 * What a remote server says of its resources, templates and prompts, checked before anyone else sees it: the
 * server is not trusted, so each entry is rebuilt from the fields MCP defines, each of the type MCP gives it and
 * within a bound; an entry whose identity (URI, template, name) is unusable is left out whole, and an optional
 * field that is not usable is dropped. Pure functions: the whole rule, tested on hostile inputs.
 */
import {
  MAX_COMPLETION_VALUES, type CacheHint, type CompletionResult, type GetPromptResult, type PromptArgumentEntry, type PromptEntry,
  type PromptMessage, type ReadResourceResult, type ResourceContents, type ResourceEntry, type ResourceTemplateEntry,
} from './catalog.js';

/** The longest URI (or URI template) relayed; longer ones are left out. */
export const MAX_URI_CHARS = 2048;
export const MAX_NAME_CHARS = 256;
const MAX_TITLE_CHARS = 1024;
const MAX_DESCRIPTION_CHARS = 16 * 1024;
const MAX_MIME_CHARS = 256;
export const MAX_PROMPT_ARGUMENTS = 64;
/** Most parts of one read, and messages of one prompt, relayed. */
export const MAX_PARTS = 1024;
export const MAX_COMPLETION_VALUE_CHARS = 1024;

/** C0 and C1 controls, and the characters that reorder or hide text: never in a name or a URI shown to anyone. */
const UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
const URI_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const MIME = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;.*)?$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A URI as a remote server may name a resource: a scheme, no whitespace or controls, at most 2048 characters. */
export function isRelayableUri(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_URI_CHARS && URI_SCHEME.test(value) && !/\s/.test(value) && !UNSAFE_CHARS.test(value);
}

function isName(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_NAME_CHARS && !UNSAFE_CHARS.test(value);
}

function text(value: unknown, max: number): string | undefined {
  return typeof value === 'string' && value.length <= max ? value : undefined;
}

function mime(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= MAX_MIME_CHARS && MIME.test(value) ? value : undefined;
}

/** MCP's annotations, only their defined keys, each of its type. */
function annotations(value: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(value)) return undefined;
  const kept: Record<string, unknown> = {};
  if (Array.isArray(value.audience) && value.audience.length <= 2 && value.audience.every((a) => a === 'user' || a === 'assistant')) kept.audience = [...value.audience];
  if (typeof value.priority === 'number' && value.priority >= 0 && value.priority <= 1) kept.priority = value.priority;
  const lastModified = text(value.lastModified, 64);
  if (lastModified !== undefined) kept.lastModified = lastModified;
  return Object.keys(kept).length > 0 ? kept : undefined;
}

function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

export function resourceEntryOf(raw: unknown): ResourceEntry | undefined {
  if (!isPlainObject(raw) || !isRelayableUri(raw.uri) || !isName(raw.name)) return undefined;
  const size = typeof raw.size === 'number' && Number.isSafeInteger(raw.size) && raw.size >= 0 ? raw.size : undefined;
  return defined({
    uri: raw.uri, name: raw.name, title: text(raw.title, MAX_TITLE_CHARS), description: text(raw.description, MAX_DESCRIPTION_CHARS),
    mimeType: mime(raw.mimeType), size, annotations: annotations(raw.annotations),
  });
}

export function resourceTemplateEntryOf(raw: unknown): ResourceTemplateEntry | undefined {
  if (!isPlainObject(raw) || !isRelayableUri(raw.uriTemplate) || !isName(raw.name)) return undefined;
  return defined({
    uriTemplate: raw.uriTemplate, name: raw.name, title: text(raw.title, MAX_TITLE_CHARS), description: text(raw.description, MAX_DESCRIPTION_CHARS),
    mimeType: mime(raw.mimeType), annotations: annotations(raw.annotations),
  });
}

function promptArgumentOf(raw: unknown): PromptArgumentEntry | undefined {
  if (!isPlainObject(raw) || !isName(raw.name)) return undefined;
  return defined({
    name: raw.name, title: text(raw.title, MAX_TITLE_CHARS), description: text(raw.description, MAX_DESCRIPTION_CHARS),
    required: typeof raw.required === 'boolean' ? raw.required : undefined,
  });
}

export function promptEntryOf(raw: unknown): PromptEntry | undefined {
  if (!isPlainObject(raw) || !isName(raw.name)) return undefined;
  let args: PromptArgumentEntry[] | undefined;
  if (raw.arguments !== undefined) {
    // A prompt whose arguments cannot all be described could not be got right: it is left out.
    if (!Array.isArray(raw.arguments) || raw.arguments.length > MAX_PROMPT_ARGUMENTS) return undefined;
    args = [];
    for (const argument of raw.arguments) {
      const checked = promptArgumentOf(argument);
      if (!checked) return undefined;
      args.push(checked);
    }
  }
  return defined({ name: raw.name, title: text(raw.title, MAX_TITLE_CHARS), description: text(raw.description, MAX_DESCRIPTION_CHARS), arguments: args });
}

/** A result's caching hints when valid. */
export function cacheHintOf(raw: unknown): CacheHint {
  if (!isPlainObject(raw)) return {};
  const ttlMs = typeof raw.ttlMs === 'number' && Number.isSafeInteger(raw.ttlMs) && raw.ttlMs >= 0 ? raw.ttlMs : undefined;
  const cacheScope = raw.cacheScope === 'public' || raw.cacheScope === 'private' ? raw.cacheScope : undefined;
  return defined({ ttlMs, cacheScope });
}

/** Each item of a listing that survives `check`, in order. */
export function entriesOf<T>(raw: unknown, check: (item: unknown) => T | undefined): T[] {
  if (!Array.isArray(raw)) return [];
  const kept: T[] = [];
  for (const item of raw) {
    const entry = check(item);
    if (entry !== undefined) kept.push(entry);
  }
  return kept;
}

function contentsOf(raw: unknown): ResourceContents | undefined {
  if (!isPlainObject(raw) || !isRelayableUri(raw.uri)) return undefined;
  const body = typeof raw.text === 'string' ? { text: raw.text } : typeof raw.blob === 'string' ? { blob: raw.blob } : undefined;
  if (!body) return undefined;
  return defined({ uri: raw.uri, mimeType: mime(raw.mimeType), ...body });
}

/** A `resources/read` result: its parts (at most 1024) and its caching hints. */
export function readResultOf(raw: unknown): ReadResourceResult {
  const value = isPlainObject(raw) ? raw : {};
  return { contents: entriesOf(value.contents, contentsOf).slice(0, MAX_PARTS), ...cacheHintOf(value) };
}

function messageOf(raw: unknown): PromptMessage | undefined {
  if (!isPlainObject(raw) || (raw.role !== 'user' && raw.role !== 'assistant') || !isPlainObject(raw.content) || typeof raw.content.type !== 'string') return undefined;
  return { role: raw.role, content: raw.content as PromptMessage['content'] };
}

/** A `prompts/get` result: its messages (at most 1024; their content blocks as MCP content, bounded by the answer cap). */
export function promptResultOf(raw: unknown): GetPromptResult {
  const value = isPlainObject(raw) ? raw : {};
  return defined({ description: text(value.description, MAX_DESCRIPTION_CHARS), messages: entriesOf(value.messages, messageOf).slice(0, MAX_PARTS) });
}

/** A `completion/complete` result: at most 100 string values of at most 1024 characters. */
export function completionResultOf(raw: unknown): CompletionResult {
  const completion = isPlainObject(raw) && isPlainObject(raw.completion) ? raw.completion : {};
  const values = Array.isArray(completion.values)
    ? completion.values.filter((v): v is string => typeof v === 'string' && v.length <= MAX_COMPLETION_VALUE_CHARS).slice(0, MAX_COMPLETION_VALUES)
    : [];
  const total = typeof completion.total === 'number' && Number.isSafeInteger(completion.total) && completion.total >= 0 ? completion.total : undefined;
  return { completion: defined({ values, total, hasMore: typeof completion.hasMore === 'boolean' ? completion.hasMore : undefined }) };
}
