/**
 * A tool result as the library hands it out: the server's `content` blocks (text, images, resources) as
 * they came, `structuredContent` when present, `isError` when set, `_meta` when present. Nothing the server
 * said is dropped or reformatted; only a missing `content` becomes `[]`.
 */
import type { CallToolResult, ContentBlock } from '../tool.js';

export function normalizeResult(raw: unknown): CallToolResult {
  const value = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const content = Array.isArray(value.content)
    ? (value.content.filter((block) => typeof block === 'object' && block !== null) as ContentBlock[])
    : [];
  const result: CallToolResult = { content };
  const structured = value.structuredContent;
  if (structured !== undefined && structured !== null) result.structuredContent = structured as Record<string, unknown>;
  if (value.isError === true) result.isError = true;
  if (typeof value._meta === 'object' && value._meta !== null) result._meta = value._meta as Record<string, unknown>;
  return result;
}

/** The text a person reads from a result: the text blocks, joined. */
export function resultText(result: CallToolResult): string {
  return result.content
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text as string)
    .join('\n');
}

/** The `_meta` key prefix the MCP specification reserves for the protocol itself. */
export const RESERVED_META_PREFIX = 'io.modelcontextprotocol/';

/**
 * A result as our endpoint may serve it: without the `_meta` keys under the protocol's reserved prefix.
 * Those keys describe the exchange that produced the result — `serverInfo` names the server that answered,
 * `related-task` an upstream task — so a remote server's (or a guest's) values would make a session's
 * `tools/call` speak for someone else while its `server/discover` speaks for subako. With them gone, the SDK
 * stamps our own serverInfo, the same one `server/discover` answers. The tool's other `_meta` keys stay;
 * an empty `_meta` is dropped.
 */
export function withoutReservedMeta(result: CallToolResult): CallToolResult {
  const meta = result._meta;
  if (meta === undefined) return result;
  const kept = Object.entries(meta).filter(([key]) => !key.startsWith(RESERVED_META_PREFIX));
  if (kept.length === Object.keys(meta).length) return result;
  const { _meta: _dropped, ...rest } = result;
  return kept.length > 0 ? { ...rest, _meta: Object.fromEntries(kept) } : rest;
}
