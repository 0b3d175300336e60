/** The check every call path makes before any I/O: the arguments against the tool's input schema. */
import type { Tool } from '../tool.js';
import { CallError, InvalidSchemaError, McpServerError } from './errors.js';
import { checkArguments } from '../common/index.js';

/**
 * Throws CallError naming the failing path and rule; a schema that cannot be compiled is the server's fault.
 * Only a defineTool's schema (written in this process) is trusted; any other — a remote server's, a package's —
 * is checked on the bounded engine, so it cannot hold the event loop (a check past its budget is refused,
 * naming the keyword).
 */
export function assertArguments(tool: Pick<Tool, 'name' | 'inputSchema' | 'source'>, args: unknown): asserts args is Record<string, unknown> {
  let check;
  try {
    check = checkArguments(tool.inputSchema, args, tool.source?.kind === 'typescript' ? 'trusted' : 'untrusted');
  } catch (err) {
    if (err instanceof InvalidSchemaError) {
      const url = typeof tool.source?.url === 'string' ? tool.source.url : undefined;
      throw new McpServerError('protocol', `the input schema of tool "${tool.name}" is not usable: ${err.message}`, {
        url,
        tool: tool.name,
      });
    }
    throw err;
  }
  if (!check.ok) throw new CallError(tool.name, check.problems);
}
