/**
 * Tool lists and tool results as a person reads them in a terminal. Pure: strings in, strings out.
 * Images and audio are described, never dumped; a structured result without text is shown as JSON.
 */
import type { CallToolResult, ContentBlock, JsonSchema } from '../tool.js';
import type { ToolMetadata } from './client-api.js';

function typeOf(schema: unknown): string {
  if (typeof schema !== 'object' || schema === null) return 'any';
  const s = schema as JsonSchema;
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.type)) return s.type.join(' | ');
  if (s.type === 'array') return `${typeOf(s.items)}[]`;
  if (typeof s.type === 'string') return s.type;
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[key])) return (s[key] as unknown[]).map(typeOf).join(' | ');
  }
  return 'any';
}

/** One paragraph per tool: name, description, then one line per top-level argument. */
export function formatToolList(tools: ToolMetadata[]): string {
  if (tools.length === 0) return 'The server lists no tools.\n';
  const paragraphs = tools.map((tool) => {
    const lines = [tool.description ? `${tool.name} — ${firstLine(tool.description)}` : tool.name];
    const properties = (tool.inputSchema.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set(Array.isArray(tool.inputSchema.required) ? (tool.inputSchema.required as string[]) : []);
    for (const [name, schema] of Object.entries(properties)) {
      const description = typeof schema?.description === 'string' ? ` — ${firstLine(schema.description)}` : '';
      lines.push(`  ${name}: ${typeOf(schema)}${required.has(name) ? '' : ' (optional)'}${description}`);
    }
    if (Object.keys(properties).length === 0) lines.push('  (no arguments)');
    return lines.join('\n');
  });
  return `${paragraphs.join('\n\n')}\n`;
}

function firstLine(text: string): string {
  return text.split('\n')[0].trim();
}

function byteLength(base64: unknown): number {
  return typeof base64 === 'string' ? Buffer.from(base64, 'base64').length : 0;
}

function formatBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return String(block.text ?? '');
    case 'image':
    case 'audio':
      return `[${block.type} ${String(block.mimeType ?? 'unknown type')}, ${byteLength(block.data)} bytes]`;
    case 'resource_link':
      return `[link ${String(block.name ?? '')} ${String(block.uri ?? '')}]`.replace(/\s+]/, ']');
    case 'resource': {
      const resource = (block.resource ?? {}) as Record<string, unknown>;
      const text = typeof resource.text === 'string' ? `\n${resource.text}` : '';
      return `[resource ${String(resource.uri ?? '')}]${text}`;
    }
    default:
      return `[${block.type} block]`;
  }
}

export function formatResult(result: CallToolResult): string {
  const parts = result.content.map(formatBlock);
  const hasText = result.content.some((block) => block.type === 'text');
  if (result.structuredContent !== undefined && !hasText) parts.push(JSON.stringify(result.structuredContent, null, 2));
  const body = parts.join('\n');
  return body.endsWith('\n') || body === '' ? body : `${body}\n`;
}
