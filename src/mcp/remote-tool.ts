/**
 * A tool of a remote MCP server as a value: it carries the server's name, description and schemas, and holds
 * only its descriptor (URL + auth). Calling it validates the arguments against the input schema before
 * anything is sent, then goes through the shared connection for that descriptor.
 *
 * A server that answers `input_required` (MCP 2026-07-28) is answered through the toolbox's `onInputRequest`
 * handler, round after round (input-rounds.ts); without one the call fails with McpInputRequiredError, which says
 * what was asked. A call that continues such a round for someone else (`ctx.resume`, the session's input relay)
 * sends their answers and the server's state back with it. The request's trace context goes in its `_meta`.
 *
 * A caller that wants progress (`ctx.progress`) gets the server's, and one that wants log messages (`ctx.log`) gets
 * those the server sends with this call, at its level: the level goes in the request's `_meta`
 * (`io.modelcontextprotocol/logLevel`), and the caller's reporter checks what comes back. A caller that aborts
 * (`ctx.signal`) cancels the request: a 2026-07-28 server sees its stream closed, a 2025-era one gets
 * `notifications/cancelled` (the SDK's doing, on either era).
 *
 * A caller that says what to do with a task of the server's own (`ctx.upstreamTasks`, upstream-tasks.ts) declares
 * the tasks extension with the call: a server that answers with a task then has it passed to the caller
 * (UpstreamTaskError) or polled to its end here. `upstreamTasks` reaches such a task afterwards, on the same
 * connection.
 *
 * The tool's outputSchema is checked here, on the bounded engine, once the call is complete: the SDK's own check
 * would refuse an `input_required` answer for carrying no structured content.
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import type { CallToolResult, InputKinds, JsonSchema, LogReporter, ProgressReporter, Tool, ToolCallContext, UpstreamTaskAccess } from '../tool.js';
import type { McpClientPool, Descriptor } from './connection.js';
import { assertArguments } from './call-arguments.js';
import { callThroughInput, requestMeta, type InputHandler, type ToolCallParams } from './input-rounds.js';
import { boundedOutputValidator } from './output-validator.js';
import { normalizeResult } from './result.js';
import { upstreamSpan } from './upstream-span.js';
import { markFailed } from '../common/index.js';
import { toolAnnotationsOf, toolIconsOf, toolTitleOf } from './tool-presentation.js';
import { LOG_LEVEL_META_KEY, isLogLevel } from './log-sender.js';
import type { RequestNotification } from './request-notifications.js';
import { withUpstreamTaskSink } from './upstream-task-sink.js';
import { UpstreamTaskError, UpstreamTaskInvalidError, declaringTasks, parseUpstreamTask, pollToResult } from './upstream-tasks.js';
import { TASK_METHODS } from './task-protocol.js';
import { z } from 'zod';

/** A tasks/ answer as the SDK is asked to take it: any object (upstream-tasks.ts checks a task). */
const AnyResult = z.looseObject({});

/** A tool as `tools/list` describes it. */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: Record<string, unknown>;
  icons?: Record<string, unknown>[];
  /** 2025-11-25's tasks: whether the tool runs as a task (`required`: only as one). Deleted in 2026-07-28. */
  execution?: { taskSupport?: unknown };
}

/** How a remote tool says it runs with 2025-11-25's tasks, when its listing says so. */
export type TaskSupport = 'required' | 'optional' | 'forbidden';

function taskSupportOf(listed: ListedTool): TaskSupport | undefined {
  const value = listed.execution?.taskSupport;
  return value === 'required' || value === 'optional' || value === 'forbidden' ? value : undefined;
}

/**
 * Whether a tool can only be called as a task (`execution.taskSupport: "required"`). Our client does not
 * speak the tasks extension (the SDK's v2 client has no task calls), so a plain `tools/call` of such a tool
 * always fails: a toolbox that serves others leaves it out and says why.
 */
export function requiresTask(tool: { source?: { kind: string; [key: string]: unknown } }): boolean {
  return tool.source?.kind === 'mcp' && tool.source.taskSupport === 'required';
}

export class RemoteTool implements Tool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly annotations?: Record<string, unknown>;
  readonly icons?: readonly Record<string, unknown>[];
  readonly source: { kind: 'mcp'; url: string; taskSupport?: TaskSupport };
  readonly upstreamTasks: UpstreamTaskAccess;
  readonly #descriptor: Descriptor;
  readonly #pool: McpClientPool;
  readonly #listed: ListedTool;
  /** The listing as the SDK client is given it: the output schema is checked here, not there. */
  readonly #definition: ListedTool;
  readonly #onInput: InputHandler | undefined;
  readonly #inputKinds: InputKinds | undefined;
  #outputCheck: ((value: unknown) => { valid: boolean; errorMessage?: string }) | undefined;

  /** `onInput` answers the server's input requests, of the kinds `inputKinds` says (declared to the server). */
  constructor(listed: ListedTool, descriptor: Descriptor, pool: McpClientPool, onInput?: InputHandler, inputKinds?: InputKinds) {
    this.name = listed.name;
    const title = toolTitleOf(listed.title);
    if (title !== undefined) this.title = title;
    if (listed.description !== undefined) this.description = listed.description;
    this.inputSchema = listed.inputSchema;
    if (listed.outputSchema !== undefined) this.outputSchema = listed.outputSchema;
    const annotations = toolAnnotationsOf(listed.annotations);
    if (annotations !== undefined) this.annotations = Object.freeze(annotations);
    const icons = toolIconsOf(listed.icons);
    if (icons !== undefined) this.icons = Object.freeze(icons.map((icon) => Object.freeze(icon)));
    const taskSupport = taskSupportOf(listed);
    this.source = Object.freeze({ kind: 'mcp', url: descriptor.url, ...(taskSupport !== undefined ? { taskSupport } : {}) });
    this.#descriptor = descriptor;
    this.#pool = pool;
    this.#listed = listed;
    const { outputSchema: _checkedHere, ...definition } = listed;
    this.#definition = definition;
    this.#onInput = onInput;
    this.upstreamTasks = Object.freeze({
      get: (taskId: string, signal?: AbortSignal) => this.#taskRequest(TASK_METHODS.get, taskId, {}, signal),
      update: async (taskId: string, inputResponses: Record<string, unknown>, signal?: AbortSignal) => { await this.#taskRequest(TASK_METHODS.update, taskId, { inputResponses }, signal); },
      cancel: async (taskId: string, signal?: AbortSignal) => { await this.#taskRequest(TASK_METHODS.cancel, taskId, {}, signal); },
    });
    this.#inputKinds = inputKinds;
    Object.freeze(this);
  }

  /** The output schema's check, compiled once; an unusable schema refuses the call before anything is sent, as the SDK would. */
  #outputChecker(): ((value: unknown) => { valid: boolean; errorMessage?: string }) | undefined {
    const schema = this.#listed.outputSchema;
    if (schema === undefined || this.#outputCheck !== undefined) return this.#outputCheck;
    try {
      this.#outputCheck = boundedOutputValidator.getValidator(schema as never);
    } catch (err) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool '${this.name}' has an invalid outputSchema: ${(err instanceof Error ? err.message : String(err)).slice(0, 200)}`);
    }
    return this.#outputCheck;
  }

  /** The complete result, its structured content checked against the output schema as the SDK would. */
  #checkOutput(result: CallToolResult, check: ((value: unknown) => { valid: boolean; errorMessage?: string }) | undefined): CallToolResult {
    if (check === undefined || result.isError) return result;
    if (result.structuredContent === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `Tool ${this.name} has an output schema but did not return structured content`);
    const checked = check(result.structuredContent);
    if (!checked.valid) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Structured content does not match the tool's output schema: ${checked.errorMessage}`);
    return result;
  }

  /**
   * Returns the server's result, `isError: true` included (the model should read a tool's failure); rejects
   * with CallError for arguments that do not match (nothing sent), CallCancelledError when `ctx.signal`
   * aborts (the request is cancelled; the shared connection stays), McpServerError when the server rejects
   * the call or cannot be reached, McpAuthError when the OAuth credential is missing or expired.
   */
  async call(args: Record<string, unknown>, ctx: ToolCallContext = {}): Promise<CallToolResult> {
    assertArguments(this, args);
    const listed = this.#listed;
    const upstream = upstreamSpan('tools/call', listed.name, this.#descriptor.url, ctx.traceparent);
    try {
      const result = await this.#send(listed, args, ctx, upstream.traceparent);
      if (result.isError) markFailed(upstream.span, 'tool_error');
      return result;
    } catch (err) {
      markFailed(upstream.span, err instanceof Error ? err.name : 'error', err instanceof Error ? err.message : undefined);
      throw err;
    } finally {
      upstream.span.end();
    }
  }

  /** The call sent, `traceparent` (the request's span) in its `_meta`. */
  async #send(listed: ListedTool, args: Record<string, unknown>, ctx: ToolCallContext, traceparent: string | undefined): Promise<CallToolResult> {
    const started = performance.now();
    // The kinds of input this call can take back: its own handler's, or those its caller passes on.
    const { _meta: meta } = requestMeta(traceparent, this.#onInput !== undefined ? this.#inputKinds : ctx.inputKinds);
    const logged = ctx.log ? { ...meta, [LOG_LEVEL_META_KEY]: ctx.log.level } : meta;
    // A caller that takes the server's own tasks declares the extension: only then may the server answer with one.
    const withLogLevel = ctx.upstreamTasks !== undefined ? declaringTasks(logged) : logged;
    const first: ToolCallParams = {
      name: listed.name, arguments: args,
      ...(withLogLevel !== undefined ? { _meta: withLogLevel } : {}),
      ...(ctx.resume ? { inputResponses: ctx.resume.responses, ...(ctx.resume.requestState !== undefined ? { requestState: ctx.resume.requestState } : {}) } : {}),
    };
    const result = await this.#pool.use(
      this.#descriptor,
      { operation: `call tool "${this.name}"`, tool: this.name, signal: ctx.signal, ...(ctx.log ? { notifications: relayLog(ctx.log) } : {}) },
      async (client) => {
        const check = this.#outputChecker();
        const send = (params: ToolCallParams) => client.callTool(params as never, {
          signal: ctx.signal,
          // A caller's remaining deadline (a session call that waited for a turn) shortens the pool's.
          timeout: ctx.timeoutMs === undefined ? this.#pool.timeoutMs : Math.max(1, Math.min(this.#pool.timeoutMs, Math.floor(ctx.timeoutMs))),
          // The definition from our listing: the SDK uses it for header mirroring even on a connection made
          // after the listing.
          toolDefinition: this.#definition as never,
          // An input request comes back to us: answered by our handler, or passed to whoever can.
          allowInputRequired: true,
          // The server's progress is relayed as it comes; the SDK asks for it only when we pass onprogress.
          ...(ctx.progress ? { onprogress: relayProgress(ctx.progress) } : {}),
        });
        let taskAnswer: Record<string, unknown> | undefined;
        const through = () => callThroughInput(send, first, this.#onInput, { tool: this.name, url: this.#descriptor.url, ...(ctx.signal ? { signal: ctx.signal } : {}) });
        let answer: unknown;
        try {
          answer = ctx.upstreamTasks === undefined ? await through() : await withUpstreamTaskSink((task) => { taskAnswer = task; }, through);
        } catch (err) {
          // The transport took a task answer off the wire and answered the request with an error in its place.
          if (taskAnswer === undefined) throw err;
          return { task: taskAnswer };
        }
        return this.#checkOutput(normalizeResult(answer), check);
      },
    ).then((value) => ('task' in value ? this.#upstreamTask(value.task as Record<string, unknown>, ctx) : value));
    ctx.report?.({ status: result.isError ? 'tool_error' : 'ok', durationMs: performance.now() - started });
    return result;
  }

  /** A task the server answered the call with: handed to the caller (`pass`), or polled to its end (`poll`). */
  async #upstreamTask(raw: Record<string, unknown>, ctx: ToolCallContext): Promise<CallToolResult> {
    let task;
    try {
      task = parseUpstreamTask(raw);
    } catch (err) {
      throw new UpstreamTaskInvalidError(this.#descriptor.url, this.name, (err as Error).message);
    }
    if (ctx.upstreamTasks === 'pass') throw new UpstreamTaskError(task, this.upstreamTasks, this.name);
    const polled = await pollToResult(this.upstreamTasks, task, this.name, { ...(ctx.signal ? { signal: ctx.signal } : {}) });
    return this.#checkOutput(polled, this.#outputChecker());
  }

  /** One `tasks/` request about a task of the server's, the extension declared. */
  #taskRequest(method: string, taskId: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    return this.#pool.use(this.#descriptor, { operation: `${method} for a task of tool "${this.name}"`, tool: this.name, ...(signal ? { signal } : {}) }, (client) =>
      client.request({ method, params: { taskId, ...params, _meta: declaringTasks(undefined) } } as never, AnyResult as never, { ...(signal ? { signal } : {}), timeout: this.#pool.timeoutMs }) as Promise<Record<string, unknown>>);
  }
}

/** The server's `notifications/message` for this call, fed to a LogReporter (which checks level, size and count). */
function relayLog(log: LogReporter) {
  return (notification: RequestNotification): void => {
    const params = notification.params;
    if (notification.method !== 'notifications/message' || typeof params !== 'object' || params === null) return;
    const { level, data, logger } = params as Record<string, unknown>;
    if (!isLogLevel(level)) return;
    log(level, data, typeof logger === 'string' ? logger : undefined);
  };
}

/** The SDK's progress callback, feeding a ProgressReporter (which checks what the server said). */
function relayProgress(progress: ProgressReporter) {
  return (update: { progress: number; total?: number; message?: string }): void => progress(update.progress, update.total, update.message);
}
