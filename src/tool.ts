/**
 * "A tool is a tool": every source (function package, remote MCP server, TypeScript function) produces
 * Tools, and every sink (MCP endpoint, library, CLI) consumes them. These types are the whole contract.
 */
import type { EgressLogEntry } from './egress/index.js';

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

/** How a call ended, for logs and people: richer than what the model reads. */
export type CallStatus = 'ok' | 'tool_error' | 'crash';

export interface CallReport {
  status: CallStatus;
  /** Present when status is `crash`: a stable reason code and a message. */
  crash?: { reason: string; message: string; stderr: string };
  /** Outgoing HTTP requests the call made (function tools). */
  egress?: EgressLogEntry[];
  /** The last of what the function wrote to stderr (function tools), whatever the status. */
  stderr?: string;
  durationMs: number;
}

export interface ToolCallContext {
  /** Cancels the call; the tool stops its work and rejects. */
  signal?: AbortSignal;
  /**
   * What is left of the call's deadline, in milliseconds, when the caller counts one (a session call that
   * waited for a turn): the tool gives its work no longer than this (and never longer than its own limit).
   */
  timeoutMs?: number;
  /** Receives how the call ended, before `call` resolves (used by the call log). */
  report?: (report: CallReport) => void;
}

export interface Tool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  /** What the source says about itself (e.g. `{ kind: 'function', package, version }` or `{ kind: 'mcp', url }`). */
  readonly source?: { kind: string; [key: string]: unknown };
  /**
   * Calls the tool. A failure the model should read is a result with `isError: true` (a function that crashed
   * included); the promise rejects only for failures of the caller's own making or of the transport.
   */
  call(args: Record<string, unknown>, ctx?: ToolCallContext): Promise<CallToolResult>;
}

export type Toolbox = Record<string, Tool>;
