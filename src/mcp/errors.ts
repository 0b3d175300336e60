/**
 * The MCP integration's typed throws, named after the spec's errors: `mcp.server_error` (a retry
 * reconnects), `mcp.auth_error` (retrying will not help: log in again) and the call error for arguments
 * that do not match a tool's input schema (raised before anything reaches the server).
 */
import { ReasonedError, SubakoError, type Problem } from '../errors.js';
import { redactUrl, redactUrlsIn } from '../common/index.js';
import type { CallToolResult } from '../tool.js';
import type { InputRequestMessage } from './input-requests.js';

export const MCP_SERVER_ERROR = 'mcp.server_error';
export const MCP_AUTH_ERROR = 'mcp.auth_error';
export const CALL_ERROR = 'call_error';

/**
 * Why a server error happened:
 * - `rejected`: the server answered the listing or the call with a JSON-RPC error (unknown tool, bad params);
 * - `tool_error`: the tool ran and returned a result with `isError: true` (only `callTool` and `mcp.call` throw
 *   it; `tool.call` returns such results, as the Tool contract says);
 * - `transport`: the server could not be reached, dropped the connection, or answered HTTP with an error;
 * - `protocol`: the server's answer broke the protocol (an invalid result, an unusable input schema).
 */
export type McpServerErrorReason = 'rejected' | 'tool_error' | 'transport' | 'protocol';

export class McpServerError extends ReasonedError<McpServerErrorReason> {
  readonly url?: string;
  readonly tool?: string;
  /** The JSON-RPC error code, when the server sent one. */
  readonly rpcCode?: number;
  /** The HTTP status, when the failure was an HTTP answer. */
  readonly httpStatus?: number;
  /** The tool's result, for `tool_error`. */
  readonly result?: CallToolResult;
  /** For a refusal because the request lacked client capabilities (-32021): the ones the server named. */
  readonly requiredCapabilities?: string[];

  constructor(
    reason: McpServerErrorReason,
    message: string,
    details: {
      url?: string;
      tool?: string;
      rpcCode?: number;
      httpStatus?: number;
      result?: CallToolResult;
      requiredCapabilities?: string[];
      cause?: unknown;
    } = {},
  ) {
    // Whatever made it, a server's URL is named as common/url-secrecy.ts shows one: the error reaches the model, the
    // call record, the log and the terminal, and the URL may carry a credential.
    super(MCP_SERVER_ERROR, reason, redactUrlsIn(message), { cause: details.cause });
    if (details.requiredCapabilities !== undefined) this.requiredCapabilities = details.requiredCapabilities;
    this.url = details.url === undefined ? undefined : redactUrl(details.url);
    this.tool = details.tool;
    this.rpcCode = details.rpcCode;
    this.httpStatus = details.httpStatus;
    this.result = details.result;
  }

  override toJSON(): { code: string; message: string; reason: McpServerErrorReason; tool?: string } {
    return { code: this.code, message: this.message, reason: this.reason, tool: this.tool };
  }
}

/**
 * A remote tool answered that it needs input only its caller's client can give (MCP 2026-07-28 `input_required`:
 * a person's answer, a model completion, the client's roots), and the caller has no way to give it (no
 * `onInputRequest` handler). A refusal (`rejected`) that carries what was asked, checked (input-requests.ts), and
 * the server's state for the retry: whoever can answer retries the call with `inputResponses` and that state.
 */
export class McpInputRequiredError extends McpServerError {
  constructor(
    message: string,
    readonly inputRequests: Record<string, InputRequestMessage>,
    readonly requestState: string | undefined,
    details: { url?: string; tool?: string } = {},
  ) {
    super('rejected', message, details);
  }
}

/**
 * Why an auth error happened:
 * - `missing`: no stored credential of that name (never logged in, or forgotten);
 * - `expired`: the credential expired and the refresh failed or was impossible;
 * - `rejected`: the server refused the credential (revoked) even after a refresh;
 * - `insufficient_scope`: the server accepted the credential but wants more scope for this request (HTTP 403
 *   `insufficient_scope`); `scope` names what it asked for, and `subako mcp login --scope` steps up;
 * - `unavailable`: this build has no OAuth credential store.
 */
export type McpAuthErrorReason = 'missing' | 'expired' | 'rejected' | 'insufficient_scope' | 'unavailable';

export class McpAuthError extends ReasonedError<McpAuthErrorReason> {
  /** The credential's name, as given to `mcp.oauth(name)`. */
  readonly credential?: string;
  /** For `insufficient_scope`: the scopes the server's challenge asked for (space-separated), when it named them. */
  readonly scope?: string;

  constructor(reason: McpAuthErrorReason, message: string, details: { credential?: string; scope?: string; cause?: unknown } = {}) {
    super(MCP_AUTH_ERROR, reason, redactUrlsIn(message), { cause: details.cause });
    this.credential = details.credential;
    this.scope = details.scope;
  }

  override toJSON(): { code: string; message: string; reason: McpAuthErrorReason; credential?: string; scope?: string } {
    return {
      code: this.code,
      message: this.message,
      reason: this.reason,
      credential: this.credential,
      ...(this.scope !== undefined ? { scope: this.scope } : {}),
    };
  }
}

/** Arguments that do not match a tool's input schema; nothing was sent. `path` and `rule` name the first problem. */
export class CallError extends SubakoError {
  readonly tool: string;
  /** JSON Pointer into the arguments (`""` for the arguments object itself), e.g. `/items/0/name`. */
  readonly path: string;
  /** The JSON Schema keyword that failed, e.g. `type`, `required`, `minimum`. */
  readonly rule: string;
  readonly problems: Problem[];

  constructor(tool: string, problems: Array<Problem & { path: string; rule: string }>) {
    const first = problems[0];
    const listed = problems.map((p) => p.message).join('; ');
    super(CALL_ERROR, `arguments for tool "${tool}" do not match its input schema: ${listed}`);
    this.tool = tool;
    this.path = first?.path ?? '';
    this.rule = first?.rule ?? 'schema';
    this.problems = problems.map(({ code, message }) => ({ code, message }));
  }

  override toJSON(): { code: string; message: string; tool: string; path: string; rule: string } {
    return { code: this.code, message: this.message, tool: this.tool, path: this.path, rule: this.rule };
  }
}

// Sealing's and the schema validator's errors live in common/ with them; named here as they always were.
export { SEAL_ERROR, SealError, InvalidSchemaError, type SealErrorReason } from '../common/index.js';
