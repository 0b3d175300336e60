/**
 * A Toolbox as an MCP server, transport aside: one server factory for both eras — 2026-07-28 stateless
 * (server/discover, per-request envelopes) and 2025-era clients (`initialize`, served statelessly) — through
 * the v2 server SDK's `createMcpHandler`. It answers web-standard requests and knows nothing of node:http, of
 * Origins or body sizes: the endpoint's gate (endpoint-admission.ts) has checked those before.
 *
 * A 2026-07-28 `tools/call` of a tool whose schema marks arguments with `x-mcp-header` is refused (HTTP 400,
 * -32020) before it reaches the SDK when its `Mcp-Param-*` headers are missing, disagree with the arguments or
 * are badly encoded (param-headers.ts): the SDK checks that only for an `McpServer`, and this is a low-level
 * `Server` so that proxied tools keep their schemas verbatim. The check holds for every tool served here,
 * ours and proxied remote ones alike, because it reads only the schema the listing shows.
 *
 * A tool that throws ToolCallRefusedError (the platform's per-session limits: too many calls waiting) is
 * answered with a JSON-RPC error (-32000, `data.retryAfterMs`) instead of a tool result: nothing ran, and a
 * model reading "try later" as the tool's own failure would be misled.
 *
 * A `tools/call` with a `progressToken` gives the tool a `ctx.progress` whose reports reach the client as
 * `notifications/progress` (progress-sender.ts); without one, tools get no reporter. One whose `_meta` carries
 * `io.modelcontextprotocol/logLevel` gives it a `ctx.log` whose messages at that level or above reach the client as
 * `notifications/message` (log-sender.ts); without one, none are sent (to a 2025-era request, the era's default). A call ends early when its client closes
 * the request's stream (the request's signal) or sends `notifications/cancelled` naming it (in-flight-calls.ts).
 *
 * A 2026-07-28 `tools/call` gives the tool `ctx.input` (what its client declared it can answer: `accepts`); a tool
 * that needs the client's input rejects with ToolInputRequiredError and the client is answered `input_required`
 * with those input requests and the tool's `requestState`, sealed when the server was given a seal (request-input.ts).
 * The retried request's answers reach the tool as they came (`ctx.input.responses`: untrusted), its state opened. A request's `_meta.traceparent`, when a valid one, reaches the tool as `ctx.traceparent`.
 *
 * Resources, resource templates and prompts come from the server's catalog (catalog-handlers.ts); `tools/list`
 * answers with the caching hints it was given (`toolsCache`).
 */
import { MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, createMcpHandler } from '@modelcontextprotocol/server';
import { toolDefinition, type CallToolResult, type Tool, type ToolCallContext, type Toolbox } from '../tool.js';
import { EMPTY_CATALOG, type Catalog } from './catalog.js';
import { catalogCapabilities, registerCatalog } from './catalog-handlers.js';
import { ClientCapabilityRequiredError, ToolInputRequiredError } from './input-requests.js';
import { callerInput, inputRequiredAnswer } from './request-input.js';
import type { RequestStateSeal } from './request-state-seal.js';
import { traceparentOf } from './trace-context.js';
import { SubakoError } from '../errors.js';
import { SUBAKO_VERSION } from '../version.js';
import { errorResult } from './define-tool.js';
import { withoutReservedMeta } from './result.js';
import { progressSender, progressTokenOf } from './progress-sender.js';
import { LEGACY_LOG_LEVEL, logLevelOf, logSender } from './log-sender.js';
import { InFlightCalls } from './in-flight-calls.js';
import { HEADER_MISMATCH_RPC_CODE, modernToolCall, paramHeaderDeclarations, paramHeaderMismatch, type ParamHeaderDeclaration } from './param-headers.js';
import { TaskResultServer, registerTaskMethods, requestDeclaresTasks, type ToolResumer } from './task-handlers.js';
import { createTaskResult, type TaskCall, type TaskHost } from './task-protocol.js';
import { UpstreamTaskError } from './upstream-tasks.js';
import type { ChangeFeed } from './change-feed.js';
import { feedBus, listenRequestOf, onResponseEnd, type ListenGate } from './listen-bus.js';

/** The JSON-RPC error code of a call refused before it ran (a server error in JSON-RPC's reserved range). */
export const CALL_REFUSED_RPC_CODE = -32000;
/** JSON-RPC's own code for a request whose params are wrong (a call refused for what it sent, not for the moment). */
export const INVALID_PARAMS_RPC_CODE = -32602;
const DEFAULT_PAGE_SIZE = 100;

/**
 * Thrown by a tool to refuse a call before anything ran (a rate or queue limit, a request it cannot take); the
 * endpoint answers a JSON-RPC error with `rpcCode` (CALL_REFUSED_RPC_CODE unless said) carrying `data` (e.g.
 * `{ retryAfterMs, limit }`) rather than a tool result.
 */
export class ToolCallRefusedError extends SubakoError {
  constructor(
    message: string, readonly data: { retryAfterMs?: number; [key: string]: unknown }, code = 'tool_call_refused', readonly rpcCode = CALL_REFUSED_RPC_CODE,
  ) {
    super(code, message);
  }
}

export interface ToolboxServerOptions {
  serverInfo?: { name: string; version: string };
  instructions?: string;
  /** Tools per `tools/list` page (default 100). */
  pageSize?: number;
  /** Resources, resource templates and prompts served beside the tools (none by default). */
  catalog?: Catalog;
  /** The caching hints `tools/list` answers with (the SDK's defaults, 0 ms and private, when absent). */
  toolsCache?: { ttlMs?: number; cacheScope?: 'public' | 'private' };
  /**
   * The names `tools/list` shows, in order (default: every tool). The others stay callable by name: a client finds
   * them another way (a session's `search_tools`).
   */
  listed?: readonly string[];
  /**
   * Names that are not served, each with why (a pinned tool whose upstream definition changed): a call to one is
   * refused with that sentence rather than "Unknown tool".
   */
  withheld?: ReadonlyMap<string, string>;
  /**
   * Keeps the tasks of the tasks extension (task-protocol.ts): given, the server announces the extension, a
   * `tools/call` from a client that declared it may become a task, and `tasks/get|update|cancel` are answered.
   */
  tasks?: TaskHost;
  /**
   * The calls in flight, by request id, for `notifications/cancelled` to find (a new registry when absent). An
   * endpoint rebuilt under its clients (a session's, when its tools change) passes the one it had.
   */
  inFlight?: InFlightCalls;
  /**
   * Seals the `requestState` a tool, prompt or resource gives with its input requests, and opens it on the retry
   * (request-state-seal.ts); absent, states pass as they are (a host whose tools seal their own: a session's).
   */
  requestStateSeal?: RequestStateSeal;
  /**
   * Where the server's list changes and resource updates are published: given, the server declares `listChanged`
   * (and, with resources, `subscribe`) and answers `subscriptions/listen` with a stream that carries them
   * (listen-bus.ts). Absent, a listen is acknowledged with nothing honored and ends at once.
   */
  changes?: ChangeFeed;
  /** At most one list change of each kind per this many ms on each listen stream (default 0: unpaced). */
  listChangedPaceMs?: number;
  /** Decides whether a listen stream may open (a session's limits) and hears when it ends. */
  listenGate?: ListenGate;
  /** The SDK's own bound on a body it reads itself (the gate's limit, so the two agree). */
  maxBodyBytes: number;
  /** Reports failures the client does not see (a tool that threw). Never given a secret. */
  report: (error: Error) => void;
}

/** The SDK's handler face: a web request, and the body when the caller already parsed it. */
export interface McpFetchHandler {
  fetch(request: Request, options?: { parsedBody?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url');
}

function decodeCursor(cursor: string): number | undefined {
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : undefined;
}

export function toolboxServer(toolbox: Toolbox, options: ToolboxServerOptions): McpFetchHandler {
  const pageSize = Math.max(1, options.pageSize ?? DEFAULT_PAGE_SIZE);
  const serverInfo = options.serverInfo ?? { name: 'subako', version: SUBAKO_VERSION };
  const { report } = options;
  // A snapshot: the served tool set does not change under a client (the spec asks for a stable listing).
  const names = Object.keys(toolbox);
  const byName = new Map(names.map((name) => [name, toolbox[name]]));
  const descriptors = (options.listed ?? names).filter((name) => byName.has(name)).map((name) => toolDescriptor(name, byName.get(name)!));
  const withheld = options.withheld ?? new Map<string, string>();

  const catalog = options.catalog ?? EMPTY_CATALOG;
  const seal = options.requestStateSeal;
  const toolsCache = options.toolsCache ?? {};
  const inFlight = options.inFlight ?? new InFlightCalls();

  const factory = () => {
    const server = new TaskResultServer(serverInfo, {
      // `logging`: tools' messages (a remote server's, relayed) reach a client that asked, as the revision allows.
      capabilities: { tools: {}, logging: {}, ...catalogCapabilities(catalog), ...(options.changes ? listenCapabilities(catalog) : {}) },
      ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
    });
    server.setRequestHandler('tools/list', async (request) => {
      const cursor = request.params?.cursor;
      const offset = cursor === undefined ? 0 : decodeCursor(cursor);
      if (offset === undefined || offset > descriptors.length) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor');
      }
      const page = descriptors.slice(offset, offset + pageSize);
      const next = offset + pageSize < descriptors.length ? encodeCursor(offset + pageSize) : undefined;
      return { tools: page as never, ...toolsCache, ...(next !== undefined ? { nextCursor: next } : {}) };
    });
    registerCatalog(server, catalog, report, seal);
    /** One call of a tool, as this server answers it: a refusal as a JSON-RPC error, a tool's throw as its error result. */
    const callTool = async (tool: Tool, args: Record<string, unknown>, callCtx: ToolCallContext): Promise<CallToolResult> => {
      let result: CallToolResult;
      try {
        // Each source checks arguments its own way: defineTool and remote tools against the schema before
        // any work, function packages in the guest (the ABI page: Subako does not check them). Checking here
        // too would change what a function's own validation says, and keep refused calls out of the call log.
        result = await tool.call(args, callCtx);
      } catch (err) {
        if (err instanceof ToolCallRefusedError) throw new ProtocolError(err.rpcCode, err.message, { code: err.code, ...err.data });
        // A remote server's own task (asked for with `pass`) is its task host's to keep.
        if (err instanceof ToolInputRequiredError || err instanceof ClientCapabilityRequiredError || err instanceof UpstreamTaskError) throw err;
        // Anything else a tool throws is its failure, answered as a tool error the model reads; reported too.
        report(err instanceof Error ? err : new Error(String(err)));
        result = errorResult(err);
      }
      // The result speaks for this server: the SDK stamps our serverInfo once the tool's reserved keys are gone.
      return server.projectCallToolResult(withoutReservedMeta(result) as never, tool.outputSchema) as CallToolResult;
    };
    // A task whose call asked for input continues here once tasks/update brings the answers.
    const resume: ToolResumer = (name, args, input, signal, how) => {
      const tool = byName.get(name);
      if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, withheld.get(name) ?? `Unknown tool: ${name}`);
      return callTool(tool, args, { signal, input, upstreamTasks: how.upstreamTasks, ...(how.durableKey !== undefined ? { durableKey: how.durableKey } : {}) });
    };
    if (options.tasks) registerTaskMethods(server, options.tasks, report, resume);
    server.setNotificationHandler('notifications/cancelled', (notification) => {
      const params = (notification.params ?? {}) as { requestId?: unknown; reason?: unknown };
      if (inFlight.cancel(params.requestId, params.reason) === 'ambiguous') {
        report(new Error('a notifications/cancelled named a request id that two calls in flight share: neither was cancelled'));
      }
    });
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const name = request.params.name;
      const tool = byName.get(name);
      if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, withheld.get(name) ?? `Unknown tool: ${name}`);
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      const asked = { method: 'tools/call' as const, name, args };
      // A retry's state is opened before anything runs: one this endpoint did not give for this call is refused.
      const input = callerInput(ctx.mcpReq, asked, seal);
      // Progress goes out as notifications related to this request, on its own response stream (a task's call,
      // once the request is answered with the task, reports to nobody: the extension has no progress on tasks).
      const token = progressTokenOf(ctx.mcpReq._meta) ?? progressTokenOf(request.params._meta);
      const progress = token === undefined ? undefined : progressSender(token, (n) => ctx.mcpReq.notify(n as never), report);
      // Log messages likewise, at the level the request named; a 2025-era one (no envelope) that named none gets
      // the era's default, a 2026-07-28 one none.
      const logLevel = logLevelOf(ctx.mcpReq.envelope, ctx.mcpReq._meta, request.params._meta) ?? (ctx.mcpReq.envelope === undefined ? LEGACY_LOG_LEVEL : undefined);
      const log = logLevel === undefined ? undefined : logSender(logLevel, (n) => ctx.mcpReq.notify(n as never), report);
      const traceparent = traceparentOf(ctx.mcpReq._meta) ?? traceparentOf(request.params._meta);
      const meta = request.params._meta ?? ctx.mcpReq._meta;
      // The call under a signal: the request's, or, for a call that may become a task, its task's.
      const invoke = (signal: AbortSignal, how?: Partial<TaskCall>): Promise<CallToolResult> => callTool(tool, args, {
        signal, ...(progress ? { progress: progress.report } : {}), ...(log ? { log: log.report } : {}), ...input,
        ...(traceparent !== undefined ? { traceparent } : {}),
        ...(meta !== undefined ? { meta: meta as Record<string, unknown> } : {}),
        ...(how?.upstreamTasks !== undefined ? { upstreamTasks: how.upstreamTasks } : {}),
        ...(how?.durableKey !== undefined ? { durableKey: how.durableKey } : {}),
      });
      // Cancelled by its stream closing (the SDK's signal) or by a notifications/cancelled naming it (until it
      // becomes a task, which tasks/cancel ends).
      const tracked = inFlight.begin(ctx.mcpReq.id, ctx.mcpReq.signal);
      try {
        const { signal } = tracked;
        // A client that declared tasks may be given one for a call that runs long; any other gets the result.
        if (options.tasks && requestDeclaresTasks(ctx)) {
          const run = await options.tasks.run(name, invoke, signal, { args });
          return (run.kind === 'task' ? createTaskResult(run.task) : run.result) as never;
        }
        // A host of tasks has a client without tasks given a remote server's task's end, polled; without a host, no task is asked for.
        return (await invoke(signal, options.tasks ? { upstreamTasks: 'poll' } : undefined)) as never;
      } catch (err) {
        if (err instanceof ToolCallRefusedError) throw new ProtocolError(err.rpcCode, err.message, { code: err.code, ...err.data });
        if (err instanceof ToolInputRequiredError) return inputRequiredAnswer(err, asked, seal) as never;
        if (err instanceof ClientCapabilityRequiredError) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: err.requiredCapabilities as never }, err.message);
        throw err;
      } finally {
        tracked.end();
        progress?.end();
        log?.end();
      }
    });
    return server;
  };

  const sdk = createMcpHandler(factory, {
    maxRequestBodySize: options.maxBodyBytes, onerror: (error) => report(error),
    ...(options.changes ? { bus: feedBus(options.changes, options.listChangedPaceMs ?? 0) } : {}),
  });
  // Scanned once, with the snapshot: only tools that declare headers are checked per call.
  const headerDeclarations = new Map<string, ParamHeaderDeclaration[]>();
  for (const name of names) {
    const declarations = paramHeaderDeclarations(byName.get(name)!.inputSchema);
    if (declarations.length > 0) headerDeclarations.set(name, declarations);
  }
  const gate = options.listenGate;
  if (headerDeclarations.size === 0 && gate === undefined) return sdk;
  return {
    async fetch(request, fetchOptions) {
      const refused = headerDeclarations.size === 0 ? undefined : paramHeaderRefusal(request, fetchOptions?.parsedBody, headerDeclarations);
      if (refused !== undefined) {
        report(new Error(`refused a tools/call: ${refused.error.message}`));
        return new Response(JSON.stringify(refused), { status: 400, headers: { 'content-type': 'application/json' } });
      }
      const listen = gate === undefined ? undefined : listenRequestOf(fetchOptions?.parsedBody);
      if (listen === undefined) return sdk.fetch(request, fetchOptions);
      const admitted = await gate!.admit(listen.filter);
      if ('refused' in admitted) {
        const { code, message, data } = admitted.refused;
        report(new Error(`refused a subscriptions/listen: ${message}`));
        const body = { jsonrpc: '2.0', id: listen.id, error: { code, message, ...(data !== undefined ? { data } : {}) } };
        return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
      }
      let response: Response;
      try {
        response = await sdk.fetch(request, fetchOptions);
      } catch (err) {
        admitted.release();
        throw err;
      }
      // The stream holds its place until it ends: the client closes it, or the server ends it.
      return onResponseEnd(response, () => admitted.release(), admitted.ends);
    },
    close: () => sdk.close(),
  };
}

/** What a server with a change feed declares: list changes of what it serves, and subscriptions to its resources. */
function listenCapabilities(catalog: Catalog): Record<string, object> {
  const { resources, prompts } = catalog.capabilities;
  return {
    tools: { listChanged: true },
    ...(prompts ? { prompts: { listChanged: true } } : {}),
    ...(resources ? { resources: { listChanged: true, subscribe: true } } : {}),
  };
}

/** A tool as `tools/list` shows it: its definition under its served name, its title, annotations and icons kept. */
export function toolDescriptor(name: string, tool: Tool): Record<string, unknown> {
  return { ...toolDefinition(name, tool) };
}

/**
 * The -32020 answer to a modern `tools/call` whose `Mcp-Param-*` headers disagree with its arguments, or
 * undefined. Only a parsed body is checked: one the gate could not parse goes to the SDK, which answers it.
 */
function paramHeaderRefusal(request: Request, body: unknown, declarationsByTool: ReadonlyMap<string, ParamHeaderDeclaration[]>) {
  const call = modernToolCall(body);
  const declarations = call === undefined ? undefined : declarationsByTool.get(call.name);
  if (call === undefined || declarations === undefined) return undefined;
  const mismatch = paramHeaderMismatch(declarations, call.arguments, (name) => request.headers.get(name));
  if (mismatch === undefined) return undefined;
  return {
    jsonrpc: '2.0' as const,
    id: call.id,
    error: {
      code: HEADER_MISMATCH_RPC_CODE,
      message: `Bad Request: the request headers and body disagree: ${mismatch.message}`,
      data: { mismatch: { header: mismatch.header, body: mismatch.message } },
    },
  };
}
