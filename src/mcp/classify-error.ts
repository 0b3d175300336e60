/**
 * Turns whatever the MCP client SDK (or the network) threw into one of the spec's two typed errors, with
 * any secret that a server echoed back redacted from the message. Pure: no I/O, no connection state.
 */
import { InsufficientScopeError, ProtocolError, SdkError, SdkHttpError, UnauthorizedError } from '@modelcontextprotocol/client';
import { McpAuthError, McpServerError } from './errors.js';
import { redactSecrets, redactUrl, redactUrlsIn, type Secret } from '../common/index.js';
import type { Auth } from './auth.js';
import { RESUMPTION } from './resuming-transport.js';
import { describeBytes } from './answer-cap.js';

export interface FailureContext {
  url: string;
  auth: Auth;
  /** What was being done: `list tools`, `call tool "add"`. */
  operation: string;
  tool?: string;
  /** Every secret revealed to this connection; their values are cut out of any message. */
  secrets: Iterable<Secret>;
  /**
   * The marker of the errors the transport makes up: a response stream lost (resuming-transport.ts), an answer
   * past the cap (bounded-transport.ts).
   */
  transportMarker?: string;
  /** What sets the cap on an answer, named in the error of an answer past it. */
  maxAnswerSetting?: string;
}

export interface Classified {
  error: McpServerError | McpAuthError | Error;
  /** Whether the connection must be dropped, so that the next call makes a new one. */
  dropConnection: boolean;
}

/**
 * The most of a server's own text (an error message, an HTTP body) repeated in an error: enough to say what
 * went wrong, never the megabytes a hostile server may send as its "reason".
 */
const MAX_SERVER_TEXT = 2000;

/** The network's codes for a server that did not answer at all: nothing was sent, nothing is to be read. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** MCP 2026-07-28: the request needs a client capability the request did not declare. */
const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;

function findInCauses<T>(err: unknown, test: (e: unknown) => e is T): T | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (test(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function messageOf(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    // "fetch failed" says little; the cause (ECONNREFUSED, socket hang up) says what happened.
    if (err.message === 'fetch failed' && cause instanceof Error) return `fetch failed (${cause.message})`;
    return err.message;
  }
  return String(err);
}

function shorten(text: string): string {
  return text.length <= MAX_SERVER_TEXT ? text : `${text.slice(0, MAX_SERVER_TEXT)}… (${text.length - MAX_SERVER_TEXT} more characters)`;
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}

/**
 * The SDK's error is deliberately not kept as `cause`: it may carry a server's response body, which may echo a
 * credential back, and `util.inspect` prints causes.
 */
export function classifyFailure(err: unknown, context: FailureContext, signal?: AbortSignal): Classified {
  // Redacted before it is shortened: a cut must never leave half of a secret standing.
  const clean = (text: string) => shorten(redactUrlsIn(redactSecrets(text, context.secrets)));
  // The URL may carry a credential (a capability token in its path, a key in its query): every message, and
  // the error's own `url`, name it as common/url-secrecy.ts shows it.
  const url = redactUrl(context.url);
  const { tool, operation } = context;

  // Already ours, made inside the operation (an input request the caller must answer, a server's malformed one).
  if (err instanceof McpServerError) return { error: err, dropConnection: false };

  const auth = findInCauses(err, (e): e is McpAuthError => e instanceof McpAuthError);
  if (auth) return { error: auth, dropConnection: true };

  const scoped = findInCauses(err, (e): e is InsufficientScopeError => e instanceof InsufficientScopeError);
  if (scoped) return { error: insufficientScope(scoped, context), dropConnection: false };

  if (signal?.aborted && (isAbort(err) || err === signal.reason)) {
    return { error: signal.reason instanceof Error ? signal.reason : (err as Error), dropConnection: false };
  }

  const unauthorized = err instanceof UnauthorizedError || (err instanceof SdkHttpError && err.status === 401);
  if (unauthorized) {
    if (context.auth.kind === 'oauth') {
      const name = context.auth.name;
      return {
        error: new McpAuthError('rejected', `the MCP server at ${url} refused the OAuth credential "${name}" (HTTP 401); run subako mcp login again`, {
          credential: name,
        }),
        dropConnection: true,
      };
    }
    return {
      error: new McpServerError('transport', `the MCP server at ${url} refused the request to ${operation}: HTTP 401 Unauthorized (check the auth headers)`, {
        url,
        tool,
        httpStatus: 401,
      }),
      dropConnection: true,
    };
  }

  // The errors our own transport made up carry the connection's marker, which a server never sees.
  const made = err instanceof ProtocolError && context.transportMarker !== undefined
    ? ((err.data ?? {}) as { streamLost?: unknown; answerTooLarge?: unknown; limitBytes?: unknown })
    : undefined;
  if (made !== undefined && made.answerTooLarge === context.transportMarker) {
    const limit = typeof made.limitBytes === 'number' ? describeBytes(made.limitBytes) : 'the cap';
    const setting = context.maxAnswerSetting ?? 'the cap on answers';
    // The connection stays: only this request's exchange was cut off.
    return {
      error: new McpServerError('transport', `the MCP server at ${url} answered the request to ${operation} with more than ${limit} in one message, the most subako reads of a remote answer; it stopped reading there and the request failed. If such answers are expected, raise ${setting}`, {
        url,
        tool,
      }),
      dropConnection: false,
    };
  }
  const lost = made !== undefined && made.streamLost === context.transportMarker;
  if (lost) {
    return {
      error: new McpServerError('transport', `the MCP server at ${url} closed the response stream for the request to ${operation} before the result, and resuming it failed (up to ${RESUMPTION.maxRetries} tries); the next call reconnects`, {
        url,
        tool,
      }),
      dropConnection: true,
    };
  }

  if (err instanceof ProtocolError && err.code === MISSING_REQUIRED_CLIENT_CAPABILITY) {
    // Typically a tool that asks a person for input (elicitation): subako's client declares no such capability.
    return {
      error: new McpServerError('rejected', `the MCP server at ${url} needs a client capability that subako does not offer to ${operation} (such as input from a person): ${clean(err.message)} (JSON-RPC error ${err.code})`, {
        url,
        tool,
        rpcCode: err.code,
        requiredCapabilities: capabilityNames(err.data),
      }),
      dropConnection: false,
    };
  }

  if (err instanceof ProtocolError) {
    return {
      error: new McpServerError('rejected', `the MCP server at ${url} rejected the request to ${operation}: ${clean(err.message)} (JSON-RPC error ${err.code})`, {
        url,
        tool,
        rpcCode: err.code,
      }),
      dropConnection: false,
    };
  }

  if (err instanceof SdkHttpError) {
    return {
      error: new McpServerError('transport', `the MCP server at ${url} failed the request to ${operation}: ${clean(err.message)} (HTTP ${err.status}); the next call reconnects`, {
        url,
        tool,
        httpStatus: err.status,
      }),
      dropConnection: true,
    };
  }

  if (err instanceof SdkError && err.code === 'UNSUPPORTED_RESULT_TYPE' && (err.data as { resultType?: unknown } | undefined)?.resultType === 'input_required') {
    // The server answered, correctly, that it needs input (an elicitation) that subako has no person to ask:
    // the request is refused, the connection is fine.
    return {
      error: new McpServerError('rejected', `the MCP server at ${url} needs input from a person to ${operation} (an input request), which subako cannot provide; the request was not completed`, {
        url,
        tool,
      }),
      dropConnection: false,
    };
  }

  if (err instanceof SdkError && (err.code === 'INVALID_RESULT' || err.code === 'UNSUPPORTED_RESULT_TYPE')) {
    return {
      error: new McpServerError('protocol', `the MCP server at ${url} answered the request to ${operation} with an invalid result: ${clean(err.message)}`, {
        url,
        tool,
      }),
      dropConnection: true,
    };
  }

  // Nothing answered (refused, no such host, no route, a port fetch will not use): the one thing to say is that,
  // with the network's own word for it, not the SDK's story of it ("Version negotiation probe failed: …").
  const unreachable = unreachableBecause(err);
  if (unreachable !== undefined) {
    return {
      error: new McpServerError('transport', `cannot reach the MCP server at ${url} to ${operation} (${clean(unreachable)})`, { url, tool }),
      dropConnection: true,
    };
  }

  return {
    error: new McpServerError('transport', `could not ${operation} at the MCP server ${url}: ${clean(messageOf(err))}; the next call reconnects`, {
      url,
      tool,
    }),
    dropConnection: true,
  };
}

/**
 * Why no server answered, when none did: the code of a connection that failed (ECONNREFUSED, ENOTFOUND…), or the
 * innermost reason under fetch's own "fetch failed" (such as "bad port"). Undefined for any other failure.
 */
function unreachableBecause(err: unknown): string | undefined {
  const coded = findInCauses(err, (e): e is { code: string } => UNREACHABLE.has((e as { code?: unknown }).code as string));
  if (coded) return coded.code;
  const fetchFailed = findInCauses(err, (e): e is TypeError => e instanceof TypeError && e.message === 'fetch failed');
  if (!fetchFailed) return undefined;
  let inner: unknown = fetchFailed;
  for (let depth = 0; depth < 8 && (inner as { cause?: unknown }).cause instanceof Error; depth++) inner = (inner as { cause: Error }).cause;
  const code = (inner as { code?: unknown }).code;
  return typeof code === 'string' ? code : inner instanceof Error && inner !== fetchFailed ? inner.message : undefined;
}

/** The names of the capabilities a -32021 answer says were needed (at most 8, each at most 64 characters). */
function capabilityNames(data: unknown): string[] {
  const required = (data as { requiredCapabilities?: unknown } | null | undefined)?.requiredCapabilities;
  if (typeof required !== 'object' || required === null || Array.isArray(required)) return [];
  return Object.keys(required).slice(0, 8).map((name) => name.slice(0, 64));
}

/** Whether a failure the transport reports leaves the connection usable (the pool does not drop it for these). */
export function keepsConnection(err: unknown): boolean {
  return findInCauses(err, (e): e is InsufficientScopeError => e instanceof InsufficientScopeError) !== undefined;
}

function insufficientScope(err: InsufficientScopeError, context: FailureContext): McpAuthError {
  const scope = err.requiredScope;
  const wanted = scope !== undefined ? `the scope "${scope}"` : 'more scope (it did not say which)';
  const scopeFlag = scope !== undefined ? ` --scope '${scope}'` : ' --scope <scopes>';
  const url = redactUrl(context.url);
  if (context.auth.kind === 'oauth') {
    const name = context.auth.name;
    return new McpAuthError(
      'insufficient_scope',
      `the MCP server at ${url} needs ${wanted} to ${context.operation}, which the OAuth credential "${name}" lacks (HTTP 403 insufficient_scope); step up with: subako mcp login --url ${url} --name ${name}${scopeFlag}`,
      { credential: name, ...(scope !== undefined ? { scope } : {}) },
    );
  }
  return new McpAuthError(
    'insufficient_scope',
    `the MCP server at ${url} needs ${wanted} to ${context.operation}, which the token in the auth headers lacks (HTTP 403 insufficient_scope); get a token with that scope`,
    scope !== undefined ? { scope } : {},
  );
}
