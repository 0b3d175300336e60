/**
 * "A tool is a tool": every source (function package, remote MCP server, TypeScript function) produces
 * Tools, and every sink (MCP endpoint, library, CLI) consumes them. These types are the whole contract.
 */
import { SubakoError } from './errors.js';

/** A JSON Schema object (2020-12). Tools' input schemas have `"type": "object"` at the top. */
export type JsonSchema = Record<string, unknown>;

/** One MCP content block as a result carries it (`text`, `image`, `resource_link`, …). */
export interface ContentBlock {
  type: string;
  [key: string]: unknown;
}

/** An MCP CallToolResult. */
export interface CallToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/**
 * How a call ended, for logs and people: richer than what the model reads. `cancelled`: the caller went away
 * (its signal aborted) and the work was stopped; it is not a crash and not a timeout.
 */
export type CallStatus = 'ok' | 'tool_error' | 'crash' | 'cancelled';

export const CALL_CANCELLED = 'cancelled';

/** How `Tool.call` rejects when its caller's signal aborted: the work was stopped, there is no result. */
export class CallCancelledError extends SubakoError {
  constructor(readonly tool: string, detail = 'its caller went away') {
    super(CALL_CANCELLED, `the call to tool "${tool}" was cancelled: ${detail}`);
  }
}

/**
 * One HTTP exchange a call's guest made (or had refused), as a sink records it: egress's `EgressLogEntry` is
 * this, its `error` narrowed to the ABI's error kinds.
 */
export interface EgressRecord {
  method: string;
  /** The hop's URL, query kept, userinfo and fragment stripped. Empty when the guest's URL did not parse. */
  url: string;
  status?: number;
  error?: string;
  /** Response body bytes received (for a file output: written). */
  bytesIn: number;
  /** Request body bytes sent. */
  bytesOut: number;
  durationMs: number;
}

export interface CallReport {
  status: CallStatus;
  /** Present when status is `crash`: a stable reason code and a message. */
  crash?: { reason: string; message: string; stderr: string };
  /** Outgoing HTTP requests the call made (function tools). */
  egress?: EgressRecord[];
  /** The last of what the function wrote to stderr (function tools), whatever the status. */
  stderr?: string;
  durationMs: number;
  /** The worker of the fleet that ran the call (function tools in scale-out); absent when it ran in this process. */
  worker?: CallWorker;
}

/** A worker of the fleet, as a call's record names it: its id (its name) and the host it runs on. */
export interface CallWorker {
  id: string;
  host: string;
}

export interface ToolCallContext {
  /**
   * Aborting it cancels the call: the tool stops its work (a function's run is killed and its worker
   * replaced; a remote call is cancelled on its connection, which stays), reports `cancelled` when it
   * reports, and rejects with CallCancelledError.
   */
  signal?: AbortSignal;
  /**
   * What is left of the call's deadline, in milliseconds, when the caller counts one (a session call that
   * waited for a turn): the tool gives its work no longer than this (and never longer than its own limit).
   */
  timeoutMs?: number;
  /** Receives how the call ended, before `call` resolves (used by the call log). */
  report?: (report: CallReport) => void;
  /**
   * Present when the caller wants progress (an MCP `tools/call` with a `progressToken`): the tool reports how
   * far it is, `done` rising with each report, `total` when it knows it. A tool that has none never calls
   * it; reporting after the call ended is ignored. It never throws, so a tool need not guard it.
   */
  progress?: ProgressReporter;
  /**
   * Present when the caller wants log messages (an MCP request whose `_meta` carries
   * `io.modelcontextprotocol/logLevel`): what the tool sends at `log.level` or above reaches the client as
   * `notifications/message` on the request's own stream; below it, or after the call ended, it is dropped. Absent:
   * nothing may be sent (the 2026-07-28 revision: no message for a request that did not ask). It never throws.
   */
  log?: LogReporter;
  /**
   * Present when the caller can ask its person for input and bring the answer back on a retried request (an
   * MCP 2026-07-28 client): a tool that needs a person's word (a call held for approval) asks through it
   * rather than waiting, by rejecting with mcp/'s ToolInputRequiredError. Absent: the caller cannot ask.
   */
  input?: CallerInput;
  /**
   * Present on a call that continues one whose tool asked for input (MCP 2026-07-28 multi-round-trip input):
   * the answers to what the tool asked, and the state it gave with its question. Set only by a caller that
   * checked the state is the tool's own for this very call (the session's input relay); a remote tool passes
   * both back to its server as `inputResponses` and `requestState`.
   */
  resume?: ToolResume;
  /**
   * The kinds of input request the caller takes back from the tool (to pass on to its client, or to say what was
   * needed): a remote tool declares them to its server, which may then ask for them. Absent: none.
   */
  inputKinds?: InputKinds;
  /**
   * The W3C trace context the call runs under, already checked to be one: the request's `_meta.traceparent`, or,
   * inside a session's call, the call's span (common/trace.ts). A tool starts its own spans under it and passes
   * theirs on to whatever it calls (a remote server's request `_meta`, a package's HTTP requests).
   */
  traceparent?: string;
  /**
   * The request's `_meta` as the caller sent it (an MCP `tools/call`), for the steps around a tool that read
   * keys of their own (the platform's idempotency key). Untrusted, and never passed to the tool's source.
   */
  meta?: Record<string, unknown>;
  /**
   * What a remote tool does when its server answers the call with a task of its own (the
   * `io.modelcontextprotocol/tasks` extension): `pass` hands the task to the caller (rejecting with mcp/'s
   * UpstreamTaskError: a caller whose client declared tasks, which keeps a handle for it), `poll` polls the server's
   * `tasks/get` until the task ends and returns its result. Absent: the call does not declare tasks to the server,
   * which then never answers with one.
   */
  upstreamTasks?: 'pass' | 'poll';
  /**
   * Present on a call that may become a task (a session's, for a client that declared tasks): a function call on a
   * worker keeps its course under this key where any replica finds it (the outcomes bucket in scale-out), so that
   * its task outlives the replica that sent it. Ignored by calls that run in this process.
   */
  durableKey?: string;
}

/**
 * How a task a remote server keeps for a call is reached after the call (its tool's connection): `get` answers
 * the server's DetailedTask as it sent it (checked by the caller), `update` gives an `input_required` task its
 * answers, `cancel` asks it to stop.
 */
export interface UpstreamTaskAccess {
  get(taskId: string, signal?: AbortSignal): Promise<Record<string, unknown>>;
  update(taskId: string, inputResponses: Record<string, unknown>, signal?: AbortSignal): Promise<void>;
  cancel(taskId: string, signal?: AbortSignal): Promise<void>;
}

/** What a call continuing an input request brings back to its tool. */
export interface ToolResume {
  /** The answers, keyed as the tool's input requests were. Untrusted: the tool's server checks them. */
  responses: Record<string, unknown>;
  /** The tool's own state from the round that asked, exactly as it gave it. */
  requestState?: string;
}

/** The kinds of input request a client said it can answer (its request's declared capabilities). */
export interface InputKinds {
  /** Form elicitation (`elicitation: {}` or `elicitation.form`). */
  form: boolean;
  /** URL elicitation (`elicitation.url`). */
  url: boolean;
  /** A model completion (`sampling`). */
  sampling: boolean;
  /** The client's roots (`roots`). */
  roots: boolean;
}

/** What a caller can do to bring a person's answer into a call (MCP 2026-07-28 multi-round-trip input). */
export interface CallerInput {
  /** The caller's client declared form elicitation for this request. */
  canElicit: boolean;
  /** Every kind of input request the client declared it answers (`canElicit` is `accepts.form`). */
  accepts?: InputKinds;
  /** On a retried request: the client's answers, keyed as the input requests were. Untrusted. */
  responses?: Record<string, unknown>;
  /** On a retried request: the state the first answer carried, echoed by the client. Untrusted. */
  requestState?: string;
}

/** MCP's log levels (RFC 5424 severities), least severe first. */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * How a tool sends a log message to its caller's client: a level, any JSON value, and optionally the logger's name.
 * `level` is the least severe level the caller asked for (a tool that calls on passes it on).
 */
export type LogReporter = ((level: LogLevel, data: unknown, logger?: string) => void) & { readonly level: LogLevel };

/** How a tool reports progress: `done` of `total` (when known), and a short line for people. */
export type ProgressReporter = (done: number, total?: number, message?: string) => void;

export interface Tool {
  readonly name: string;
  /** A name for people (MCP's `title`), as the source gave it. */
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  /** MCP's tool annotations (`readOnlyHint`, `destructiveHint`, …), as the source gave them: hints, never trusted. */
  readonly annotations?: Record<string, unknown>;
  /** MCP's icons (`{ src, mimeType?, sizes?, theme? }`), as the source gave them. */
  readonly icons?: readonly Record<string, unknown>[];
  /** What the source says about itself (e.g. `{ kind: 'function', package, version }` or `{ kind: 'mcp', url }`). */
  readonly source?: { kind: string; [key: string]: unknown };
  /** A remote tool's way to its server's own tasks (ToolCallContext.upstreamTasks); kept by a composed tool. */
  readonly upstreamTasks?: UpstreamTaskAccess;
  /**
   * Calls the tool. A failure the model should read is a result with `isError: true` (a function that crashed
   * included); the promise rejects only for failures of the caller's own making — arguments a checked source
   * refuses before any I/O (CallError: remote MCP tools and `defineTool`; function packages are not checked,
   * their guest validates), a cancelled call (CallCancelledError) — or of the transport.
   */
  call(args: Record<string, unknown>, ctx?: ToolCallContext): Promise<CallToolResult>;
}

export type Toolbox = Record<string, Tool>;

/** One call of a tool, as a function: what an interceptor wraps. */
export type ToolCall<C extends ToolCallContext = ToolCallContext> = (args: Record<string, unknown>, ctx: C) => Promise<CallToolResult>;

/**
 * A step the platform adds around a tool's calls — approval, admission, the call log — as undici composes
 * dispatchers: given the next call, the call with the step around it. Composed once (`composeTool`), never
 * per call.
 */
export type ToolInterceptor<C extends ToolCallContext = ToolCallContext> = (next: ToolCall<C>) => ToolCall<C>;

/**
 * What defines a tool to a client, under `name`: title, description, schemas, annotations and icons, the ones it
 * has (what `tools/list` shows, and what a composed tool keeps).
 */
export function toolDefinition(name: string, tool: Tool): Pick<Tool, 'name' | 'title' | 'description' | 'inputSchema' | 'outputSchema' | 'annotations' | 'icons'> {
  return {
    name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
    ...(tool.icons !== undefined ? { icons: tool.icons } : {}),
  };
}

/**
 * The tool with `interceptors` around its calls, the first outermost (it sees a call first and its end last),
 * under `name` when given (a published name). Its schemas and source are the tool's; built once, it costs a
 * call nothing but the steps themselves.
 */
export function composeTool<C extends ToolCallContext = ToolCallContext>(
  tool: Tool, interceptors: readonly ToolInterceptor<C>[], name: string = tool.name,
): Tool & { call(args: Record<string, unknown>, ctx?: C): Promise<CallToolResult> } {
  let call: ToolCall<C> = (args, ctx) => tool.call(args, ctx);
  for (let i = interceptors.length - 1; i >= 0; i -= 1) call = interceptors[i](call);
  const composed = call;
  return Object.freeze({
    ...toolDefinition(name, tool),
    ...(tool.source !== undefined ? { source: tool.source } : {}),
    ...(tool.upstreamTasks !== undefined ? { upstreamTasks: tool.upstreamTasks } : {}),
    call: (args: Record<string, unknown>, ctx?: C) => composed(args, (ctx ?? {}) as C),
  });
}
