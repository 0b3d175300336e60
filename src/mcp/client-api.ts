/**
 * The outbound half of the spec: `tools` (a toolbox from a server's listing), `call` (a direct call without
 * listing or validation), `catalog` (the server's resources, templates and prompts), and the reflection pair
 * `getMetadata` / `callTool` that works on any Tool.
 *
 * A tool that answers `input_required` (MCP 2026-07-28) is answered through `onInputRequest`, when the caller
 * gives one (input-rounds.ts); without it the call fails with McpInputRequiredError naming what was asked.
 */
import type { CallToolResult, InputKinds, JsonSchema, Tool, ToolCallContext, Toolbox } from '../tool.js';
import { headers, isAuth, type Auth } from './auth.js';
import { sharedMcpClientPool, type McpClientPool, type Descriptor } from './connection.js';
import { assertArguments } from './call-arguments.js';
import { McpServerError } from './errors.js';
import { DEFAULT_HANDLED_KINDS, callThroughInput, requestMeta, type InputHandler, type ToolCallParams } from './input-rounds.js';
import { RemoteCatalog } from './remote-catalog.js';
import { RemoteTool, type ListedTool } from './remote-tool.js';
import { normalizeResult, resultText } from './result.js';

export interface ServerOptions {
  url: string | URL;
  /** Defaults to no headers (anonymous access). */
  auth?: Auth;
  /** Defaults to the process-wide pool. */
  pool?: McpClientPool;
  /**
   * Answers what a tool asks its caller for (MCP 2026-07-28 input requests: a person's answer, a model
   * completion, the client's roots), one request at a time, with the bare result MCP defines for it (an
   * elicitation's `{ action, content }`). Without it, a tool that asks fails the call with McpInputRequiredError.
   */
  onInputRequest?: InputHandler;
  /**
   * The kinds of input request `onInputRequest` answers, declared to the server with each call (a server asks
   * only for what a request declares). Default: a person's answers, in a form or at a URL.
   */
  inputKinds?: Partial<InputKinds>;
}

function handledKinds(options: ServerOptions): InputKinds | undefined {
  return options.onInputRequest === undefined ? undefined : { ...DEFAULT_HANDLED_KINDS, ...options.inputKinds };
}

function descriptorOf(options: ServerOptions): Descriptor {
  let url: URL;
  try {
    url = new URL(String(options.url));
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a URL
    throw new TypeError(`"${String(options.url)}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`an MCP server URL is http or https, not ${url.protocol}`);
  const auth = options.auth ?? headers({});
  if (!isAuth(auth)) throw new TypeError('auth must come from mcp.headers(...) or mcp.oauth(name)');
  return Object.freeze({ url: url.href, auth });
}

/** Lists every page of a server's tools and returns them keyed by name (the first of duplicate names wins). */
export async function tools(options: ServerOptions, ctx: { signal?: AbortSignal } = {}): Promise<Toolbox> {
  const descriptor = descriptorOf(options);
  const pool = options.pool ?? sharedMcpClientPool;
  const listing = await pool.use(descriptor, { operation: 'list tools', signal: ctx.signal }, (client) =>
    // 'refresh': a toolbox reflects the server now, not a cached listing.
    client.listTools(undefined, { signal: ctx.signal, timeout: pool.timeoutMs, cacheMode: 'refresh' }),
  );
  const toolbox: Toolbox = {};
  for (const raw of listing.tools as unknown as ListedTool[]) {
    if (typeof raw?.name !== 'string' || Object.prototype.hasOwnProperty.call(toolbox, raw.name)) continue;
    const tool = new RemoteTool(raw, descriptor, pool, options.onInputRequest, handledKinds(options));
    // defineProperty: a tool named "__proto__" is a tool like any other.
    Object.defineProperty(toolbox, raw.name, { value: tool, enumerable: true, writable: false, configurable: false });
  }
  return toolbox;
}

export interface DirectCall extends ServerOptions {
  tool: string;
  arguments?: Record<string, unknown>;
  /**
   * The tool's input schema, when the caller knows it (the bindings `pull` generates carry the part that
   * matters): the arguments it marks with `x-mcp-header` are sent as `Mcp-Param-*` headers with the call, on
   * the first try (SEP-2243; a gateway may route on them). Not used to validate. Without it the headers go
   * out only when this connection already holds the server's listing; a 2026-07-28 server that requires
   * them refuses the call (-32020, nothing ran), and the SDK client then lists the tools and retries once.
   */
  inputSchema?: JsonSchema;
}

/**
 * Calls a tool by name without listing and without validating: a refusal comes back from the server as
 * McpServerError (`rejected`), a tool failure as McpServerError (`tool_error`, with the result attached).
 * The `Mcp-Param-*` headers the tool asks for are sent as `callTool` sends them (see `inputSchema`).
 */
export async function call(options: DirectCall, ctx: ToolCallContext = {}): Promise<CallToolResult> {
  const descriptor = descriptorOf(options);
  const pool = options.pool ?? sharedMcpClientPool;
  const name = options.tool;
  // The same path as a listed RemoteTool's call: the SDK client mirrors the declared arguments into headers.
  const definition = options.inputSchema === undefined ? {} : { toolDefinition: { name, inputSchema: options.inputSchema } as never };
  const first: ToolCallParams = {
    name, arguments: options.arguments ?? {}, ...requestMeta(ctx.traceparent, handledKinds(options) ?? ctx.inputKinds),
  };
  const result = await pool.use(descriptor, { operation: `call tool "${name}"`, tool: name, signal: ctx.signal }, async (client) => {
    const send = (params: ToolCallParams) => client.callTool(params as never, { signal: ctx.signal, timeout: pool.timeoutMs, allowInputRequired: true, ...definition });
    return normalizeResult(await callThroughInput(send, first, options.onInputRequest, { tool: name, url: descriptor.url, ...(ctx.signal ? { signal: ctx.signal } : {}) }));
  });
  return throwOnToolError(result, name, descriptor.url);
}

/**
 * A server's resources, resource templates and prompts, as a Catalog (a page of each at a time, a resource read
 * and a prompt got on request): what `mcp.serve` can serve beside tools (`catalog` option), or read directly.
 */
export async function catalog(options: ServerOptions, ctx: { signal?: AbortSignal } = {}): Promise<RemoteCatalog> {
  return RemoteCatalog.open(descriptorOf(options), options.pool ?? sharedMcpClientPool, ctx);
}

export interface ToolMetadata {
  name: string;
  description?: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  source?: { kind: string; [key: string]: unknown };
}

/** The public signature of a tool: a plain copy, safe to show a model or a person. */
export function getMetadata(tool: Tool): ToolMetadata {
  const metadata: ToolMetadata = { name: tool.name, inputSchema: tool.inputSchema };
  if (tool.description !== undefined) metadata.description = tool.description;
  if (tool.outputSchema !== undefined) metadata.outputSchema = tool.outputSchema;
  if (tool.source !== undefined) metadata.source = { ...tool.source };
  return metadata;
}

/**
 * Calls any Tool with runtime-built arguments: validates them against the input schema before any I/O
 * (CallError naming the path and the rule), then calls. A result with `isError` throws McpServerError
 * (`tool_error`, result attached): here a tool's failure is the caller's typed throw, whereas `tool.call`
 * returns it for a model to read.
 */
export async function callTool(tool: Tool, args: Record<string, unknown>, ctx: ToolCallContext = {}): Promise<CallToolResult> {
  assertArguments(tool, args);
  const result = await tool.call(args, ctx);
  const url = typeof tool.source?.url === 'string' ? tool.source.url : undefined;
  return throwOnToolError(result, tool.name, url);
}

function throwOnToolError(result: CallToolResult, tool: string, url: string | undefined): CallToolResult {
  if (!result.isError) return result;
  const text = resultText(result).slice(0, 500);
  throw new McpServerError('tool_error', `tool "${tool}" failed${text ? `: ${text}` : ''}`, { url, tool, result });
}
