/**
 * `defineTool`: a TypeScript function as a Tool. Its arguments are validated before the handler runs (the
 * JSON Schema always; a zod schema too, whose parsed output — defaults, transforms — is what the handler
 * gets); a handler's thrown error becomes a result with `isError: true`, so a model reads it.
 *
 * What the handler returns becomes the result:
 * - an object with a `content` array: a CallToolResult, used as it is;
 * - a string: one text block;
 * - `undefined`: no content;
 * - any other JSON value: a text block of its JSON, and `structuredContent` when it is a plain object.
 */
import { toJSONSchema, type ZodType } from 'zod';
import { CallCancelledError, type CallToolResult, type JsonSchema, type Tool, type ToolCallContext } from '../tool.js';
import { assertArguments } from './call-arguments.js';
import { CallError } from './errors.js';
import { ToolInputRequiredError } from './input-requests.js';
import { describeInputRequests } from './input-rounds.js';
import { normalizeResult } from './result.js';
import { compileSchema } from '../common/index.js';

export interface DefineToolOptions<Args> {
  name: string;
  description?: string;
  /** JSON Schema (2020-12) of the arguments, `"type": "object"` at the top. Give this or `schema`. */
  inputSchema?: JsonSchema;
  /** A zod schema of the arguments; its JSON Schema is what the tool advertises. */
  schema?: ZodType<Args>;
  outputSchema?: JsonSchema | ZodType;
  /**
   * The tool's work. `ctx.progress(done, total?, message?)` is there when the caller asked for progress (an MCP
   * client's progressToken): each report reaches it as `notifications/progress`, `done` rising each time.
   * `ctx.input` is there when the caller can ask its client for input (an MCP 2026-07-28 client): the handler
   * throws ToolInputRequiredError to ask, and reads the answers (and its own state) on the retry in `ctx.input`.
   */
  handler: (args: Args, ctx: ToolCallContext) => unknown;
}

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** MCP's tool-name rule, as its users read it. */
export const TOOL_NAME_RULE = '1-128 of A-Z a-z 0-9 _ - .';

/** Whether a name is a tool name by MCP's rule (the one defineTool holds its tools to, and an agent's published names). */
export function isToolName(name: string): boolean {
  return TOOL_NAME.test(name);
}

function isZod(value: unknown): value is ZodType {
  return typeof value === 'object' && value !== null && typeof (value as { safeParse?: unknown }).safeParse === 'function';
}

function jsonSchemaOf(schema: ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

export function toResult(value: unknown): CallToolResult {
  if (typeof value === 'object' && value !== null && Array.isArray((value as { content?: unknown }).content)) {
    return normalizeResult(value);
  }
  if (value === undefined) return { content: [] };
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] };
  const text = JSON.stringify(value) ?? String(value);
  const result: CallToolResult = { content: [{ type: 'text', text }] };
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) result.structuredContent = value as Record<string, unknown>;
  return result;
}

export function errorResult(err: unknown): CallToolResult {
  const message = err instanceof Error ? err.message : String(err);
  return { content: [{ type: 'text', text: message }], isError: true };
}

export function defineTool<Args = Record<string, unknown>>(options: DefineToolOptions<Args>): Tool {
  if (!isToolName(options.name)) {
    throw new TypeError(`"${options.name}" is not a tool name (${TOOL_NAME_RULE})`);
  }
  if ((options.inputSchema === undefined) === (options.schema === undefined)) {
    throw new TypeError(`tool "${options.name}" needs exactly one of inputSchema (JSON Schema) or schema (zod)`);
  }
  const zod = options.schema;
  const inputSchema = zod ? jsonSchemaOf(zod, 'input') : (options.inputSchema as JsonSchema);
  const outputSchema = isZod(options.outputSchema) ? jsonSchemaOf(options.outputSchema, 'output') : options.outputSchema;
  // Compile now: a schema that cannot be compiled is the definer's mistake, found at definition time.
  compileSchema(inputSchema);
  const name = options.name;
  const handler = options.handler;

  const tool: Tool = {
    name,
    ...(options.description !== undefined ? { description: options.description } : {}),
    inputSchema,
    ...(outputSchema !== undefined ? { outputSchema } : {}),
    source: { kind: 'typescript' },
    async call(args: Record<string, unknown>, ctx: ToolCallContext = {}): Promise<CallToolResult> {
      assertArguments(tool, args);
      let parsed: Args = args as Args;
      if (zod) {
        const outcome = zod.safeParse(args);
        if (!outcome.success) {
          throw new CallError(
            name,
            outcome.error.issues.map((issue) => {
              const path = issue.path.map((segment) => `/${String(segment).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
              return { code: `call.${issue.code}`, path, rule: issue.code, message: `${path === '' ? 'the arguments' : `argument ${path}`} ${issue.message} (rule: ${issue.code})` };
            }),
          );
        }
        parsed = outcome.data;
      }
      const started = performance.now();
      let result: CallToolResult;
      try {
        result = toResult(await handler(parsed, ctx));
      } catch (err) {
        // A question for the client goes back to it (the endpoint answers input_required), when the caller can ask;
        // one asked of a caller that cannot is the call's end, saying what was needed.
        if (err instanceof ToolInputRequiredError && ctx.input !== undefined && !ctx.signal?.aborted) throw err;
        result = err instanceof ToolInputRequiredError
          ? errorResult(new Error(`the tool ${name} needs input its caller cannot give: ${describeInputRequests(err.inputRequests)}`))
          : errorResult(err);
      }
      // The caller went away while the handler ran: Tool.call's contract is a cancellation, whatever it returned.
      if (ctx.signal?.aborted) {
        ctx.report?.({ status: 'cancelled', durationMs: performance.now() - started });
        throw new CallCancelledError(name);
      }
      ctx.report?.({ status: result.isError ? 'tool_error' : 'ok', durationMs: performance.now() - started });
      return result;
    },
  };
  return Object.freeze(tool);
}
