/**
 * What discovery accepts, as the ABI page's tables say it. Pure: each check takes what the guest answered
 * and returns problems with stable codes (`discovery.*`, `tools.*`), every one found, never a throw.
 */
import { jsonBytes } from '../common/first-call.js';
import type { Problem } from '../errors.js';
import type { ToolInfo } from './types.js';
import { PROTOCOL_VERSION } from './protocol.js';

export const TOOL_RULES = Object.freeze({
  maxPages: 16,
  minTools: 1,
  maxTools: 64,
  namePattern: /^[a-z0-9_-]{1,64}$/,
  maxDescriptionChars: 1024,
  maxInputSchemaBytes: 64 * 1024,
  maxOutputSchemaBytes: 64 * 1024,
  maxTotalBytes: 256 * 1024,
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const kib = (bytes: number): string => `${Math.ceil(bytes / 1024)} KiB`;

/** The `server/discover` answer: it must speak 2026-07-28 and offer tools. */
export function checkDiscoverResult(result: unknown): Problem[] {
  if (!isObject(result)) return [{ code: 'discovery.result', message: 'server/discover answered something that is not an object; answer {"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}' }];
  const problems: Problem[] = [];
  const versions = result.supportedVersions;
  if (!Array.isArray(versions) || !versions.includes(PROTOCOL_VERSION)) {
    problems.push({ code: 'discovery.version', message: `server/discover's supportedVersions ${JSON.stringify(versions ?? null)} does not include "${PROTOCOL_VERSION}", the only revision ABI 1 speaks` });
  }
  if (!isObject(result.capabilities) || !isObject(result.capabilities.tools)) {
    problems.push({ code: 'discovery.capability', message: 'server/discover does not offer the tools capability; answer "capabilities": {"tools": {}}' });
  }
  return problems;
}

export interface ToolsPage {
  tools: unknown[];
  nextCursor: string | null;
}

/** One `tools/list` answer: a `tools` array and an optional string `nextCursor`. */
export function readToolsPage(result: unknown, page: number): ToolsPage | Problem {
  if (!isObject(result) || !Array.isArray(result.tools)) {
    return { code: 'discovery.tools-list', message: `tools/list page ${page} has no "tools" array; answer {"tools":[...]}` };
  }
  const cursor = result.nextCursor;
  if (cursor !== undefined && cursor !== null && typeof cursor !== 'string') {
    return { code: 'discovery.cursor', message: `tools/list page ${page} has a nextCursor that is not a string: ${JSON.stringify(cursor)}` };
  }
  return { tools: result.tools, nextCursor: typeof cursor === 'string' ? cursor : null };
}

/** Every rule of the tools table over the whole list; returns the tools as ToolInfo when none is broken. */
export function checkTools(tools: unknown[]): { problems: Problem[]; tools: ToolInfo[] } {
  const problems: Problem[] = [];
  if (tools.length < TOOL_RULES.minTools) problems.push({ code: 'tools.count', message: 'tools/list answered no tools; a package offers 1 to 64' });
  if (tools.length > TOOL_RULES.maxTools) problems.push({ code: 'tools.count', message: `tools/list answered ${tools.length} tools; a package offers 1 to 64` });
  const seen = new Set<string>();
  const accepted: ToolInfo[] = [];
  tools.forEach((tool, index) => {
    const where = `tool ${index + 1}`;
    if (!isObject(tool)) {
      problems.push({ code: 'tools.shape', message: `${where} is not an object; each tool is {"name","description","inputSchema"}` });
      return;
    }
    const name = tool.name;
    const label = typeof name === 'string' ? `tool "${name.slice(0, 80)}"` : where;
    if (typeof name !== 'string' || !TOOL_RULES.namePattern.test(name)) {
      problems.push({ code: 'tools.name', message: `${label} has a name outside ^[a-z0-9_-]{1,64}$ (1 to 64 of a-z, 0-9, _ and -): ${JSON.stringify(name ?? null).slice(0, 100)}` });
    } else if (seen.has(name)) {
      problems.push({ code: 'tools.duplicate', message: `${label} appears more than once; tool names are unique` });
    } else {
      seen.add(name);
    }
    const description = tool.description;
    if (description !== undefined && typeof description !== 'string') {
      problems.push({ code: 'tools.description', message: `${label} has a description that is not a string` });
    } else if (typeof description === 'string' && [...description].length > TOOL_RULES.maxDescriptionChars) {
      problems.push({ code: 'tools.description', message: `${label} has a description of ${[...description].length} characters; at most 1,024 are accepted` });
    }
    const input = tool.inputSchema;
    if (!isObject(input) || input.type !== 'object') {
      problems.push({ code: 'tools.input-schema', message: `${label} has an inputSchema without "type": "object" at its top; tools take an object of arguments` });
    } else if (jsonBytes(input) > TOOL_RULES.maxInputSchemaBytes) {
      problems.push({ code: 'tools.input-schema-size', message: `${label} has an inputSchema of ${kib(jsonBytes(input))}; at most 64 KiB is accepted` });
    }
    const output = tool.outputSchema;
    if (output !== undefined && !isObject(output)) {
      problems.push({ code: 'tools.output-schema', message: `${label} has an outputSchema that is not a JSON Schema object` });
    } else if (output !== undefined && jsonBytes(output) > TOOL_RULES.maxOutputSchemaBytes) {
      problems.push({ code: 'tools.output-schema-size', message: `${label} has an outputSchema of ${kib(jsonBytes(output))}; at most 64 KiB is accepted` });
    }
    accepted.push(toToolInfo(tool));
  });
  const total = jsonBytes(tools);
  if (total > TOOL_RULES.maxTotalBytes) {
    problems.push({ code: 'tools.total-size', message: `all tools together take ${kib(total)}; at most 256 KiB is accepted` });
  }
  return { problems, tools: problems.length === 0 ? accepted : [] };
}

function toToolInfo(tool: Record<string, unknown>): ToolInfo {
  const info: ToolInfo = { name: tool.name as string, inputSchema: tool.inputSchema as Record<string, unknown> };
  if (typeof tool.description === 'string') info.description = tool.description;
  if (isObject(tool.outputSchema)) info.outputSchema = tool.outputSchema;
  if (typeof tool.title === 'string') info.title = tool.title;
  if (isObject(tool.annotations)) info.annotations = tool.annotations;
  return info;
}
