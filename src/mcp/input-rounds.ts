/**
 * The client side of multi-round-trip input for a tool call: send the call; while the server answers
 * `input_required`, check what it asks (input-requests.ts), have the caller's handler answer each request, and
 * send the call again with those answers and the server's `requestState` echoed exactly — at most 10 rounds.
 * Without a handler, the first `input_required` ends the call with McpInputRequiredError, which carries what was
 * asked and the state, so that a caller who can ask elsewhere (the session's input relay) can.
 *
 * The handler answers each request with the bare result MCP defines for it: an elicitation's
 * `{ action: 'accept' | 'decline' | 'cancel', content? }`, sampling's message, roots' `{ roots }`.
 */
import type { InputKinds } from '../tool.js';
import { McpInputRequiredError, McpServerError } from './errors.js';
import { CLIENT_CAPABILITIES_KEY, capabilitiesFor, checkInputRequests, inputKindOf, type InputRequestMessage } from './input-requests.js';
import { TRACEPARENT } from './trace-context.js';

/** Answers one input request a tool's server asked (`key` is its key in the round), with the bare result. */
export type InputHandler = (request: InputRequestMessage, ctx: { tool: string; key: string; signal?: AbortSignal }) => unknown;

/** The most rounds of input one call goes through before it fails (the SDK's own default). */
export const MAX_INPUT_ROUNDS = 10;

/** One `tools/call`'s params, as the rounds send them. */
export interface ToolCallParams {
  name: string;
  arguments: Record<string, unknown>;
  _meta?: Record<string, unknown>;
  inputResponses?: Record<string, unknown>;
  requestState?: string;
}

const STATE_ONLY_PAUSE_MS = 250;

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(timer); reject(signal?.reason); };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** What a library caller with a handler declares by default: a person's answers, in a form or at a URL. */
export const DEFAULT_HANDLED_KINDS: InputKinds = Object.freeze({ form: true, url: true, sampling: false, roots: false });

/**
 * A tool call's `_meta`: its trace context, and the input capabilities it declares (over the SDK's own empty
 * declaration: a server asks only for what a request declares). Empty when there is neither.
 */
export function requestMeta(traceparent: string | undefined, kinds: InputKinds | undefined): { _meta?: Record<string, unknown> } {
  const capabilities = kinds === undefined ? {} : capabilitiesFor(kinds);
  const meta = {
    ...(traceparent !== undefined ? { [TRACEPARENT]: traceparent } : {}),
    ...(Object.keys(capabilities).length > 0 ? { [CLIENT_CAPABILITIES_KEY]: capabilities } : {}),
  };
  return Object.keys(meta).length > 0 ? { _meta: meta } : {};
}

export function isInputRequired(answer: unknown): answer is { resultType: 'input_required'; inputRequests?: unknown; requestState?: unknown } {
  return typeof answer === 'object' && answer !== null && (answer as { resultType?: unknown }).resultType === 'input_required';
}

/** One line on what a round asked, for messages: the kinds and the first message. */
export function describeInputRequests(requests: Record<string, InputRequestMessage>): string {
  const parts = Object.values(requests).map((request) => {
    const kind = inputKindOf(request);
    const message = typeof request.params?.message === 'string' ? `: ${JSON.stringify(request.params.message.slice(0, 200))}` : '';
    return kind === 'form' ? `a form elicitation${message}` : kind === 'url' ? `a URL elicitation${message}` : kind === 'sampling' ? 'a model completion (sampling)' : 'the client\'s roots';
  });
  return parts.length === 0 ? 'a retry with its request state' : parts.join('; ');
}

/**
 * The call's complete answer (raw), through as many rounds of input as the server asks and the handler answers.
 * `send` makes one round's request.
 */
export async function callThroughInput(
  send: (params: ToolCallParams) => Promise<unknown>,
  first: ToolCallParams,
  handler: InputHandler | undefined,
  where: { tool: string; url: string; signal?: AbortSignal },
): Promise<unknown> {
  let params = first;
  for (let round = 1; ; round += 1) {
    const answer = await send(params);
    if (!isInputRequired(answer)) return answer;
    const checked = checkInputRequests(answer.inputRequests, answer.requestState);
    if (!checked.ok) {
      throw new McpServerError('protocol', `the MCP server at ${where.url} asked for input to call tool "${where.tool}" in a way subako does not relay: ${checked.problem}`, { url: where.url, tool: where.tool });
    }
    const state = answer.requestState as string | undefined;
    if (handler === undefined) {
      throw new McpInputRequiredError(
        `the MCP server at ${where.url} needs input to call tool "${where.tool}" (${describeInputRequests(checked.requests)}); pass onInputRequest to answer it`,
        checked.requests, state, { url: where.url, tool: where.tool },
      );
    }
    if (round >= MAX_INPUT_ROUNDS) {
      throw new McpServerError('rejected', `the MCP server at ${where.url} still asked for input to call tool "${where.tool}" after ${MAX_INPUT_ROUNDS} rounds`, { url: where.url, tool: where.tool });
    }
    // A round that asks nothing (the server shedding load) is retried after a pause, as the SDK's own client does.
    if (Object.keys(checked.requests).length === 0) await pause(STATE_ONLY_PAUSE_MS, where.signal);
    const responses: Record<string, unknown> = {};
    for (const [key, request] of Object.entries(checked.requests)) {
      const response = await handler(request, { tool: where.tool, key, ...(where.signal ? { signal: where.signal } : {}) });
      Object.defineProperty(responses, key, { value: response, enumerable: true, writable: true, configurable: true });
    }
    const { inputResponses: _spent, requestState: _old, ...base } = params;
    params = { ...base, ...(Object.keys(responses).length > 0 ? { inputResponses: responses } : {}), ...(state !== undefined ? { requestState: state } : {}) };
  }
}
