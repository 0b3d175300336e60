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
