/**
 * Multi-round-trip input on the serving side, the same for each method that may ask (`tools/call`, `prompts/get`,
 * `resources/read`): what a request lets its handler ask — `ctx.input`, the kinds its client declared, and on a
 * retry the client's answers and the handler's own state, opened (request-state-seal.ts) — and a handler's
 * question (ToolInputRequiredError) as the `input_required` result, its state sealed.
 *
 * Only a 2026-07-28 request carries its client's capabilities (a 2025-era one is served statelessly, so what it
 * declared at `initialize` is not known here): without them there is no `ctx.input`, and a handler does not ask.
 * A handler that asks for a kind its client did not declare is answered for it by the SDK with
 * MissingRequiredClientCapability (-32021, HTTP 400, `data.requiredCapabilities`), as the revision requires.
 */
import { ProtocolError, ProtocolErrorCode, inputRequired } from '@modelcontextprotocol/server';
import type { CallerInput } from '../tool.js';
import { CLIENT_CAPABILITIES_KEY, acceptedInputKinds, type ToolInputRequiredError } from './input-requests.js';
import { RequestStateRefusedError, type RequestStateSeal, type StatefulRequest } from './request-state-seal.js';

/** The parts of the SDK's request context this reads. */
export interface InputCarryingRequest {
  envelope?: Record<string, unknown>;
  inputResponses?: Record<string, unknown>;
  requestState: () => unknown;
}

/**
 * `ctx.input` for a handler of `request`, or nothing for a request that declares no capabilities. `seal` undefined:
 * the state reaches the handler as the client sent it (a host whose handlers seal their own). Throws the -32602
 * answer for a state the seal refuses.
 */
export function callerInput(mcpReq: InputCarryingRequest, request: StatefulRequest, seal: RequestStateSeal | undefined): { input?: CallerInput } {
  const capabilities = mcpReq.envelope?.[CLIENT_CAPABILITIES_KEY];
  if (capabilities === undefined) return {};
  const carried = mcpReq.requestState();
  let state: string | undefined;
  if (typeof carried === 'string') {
    try {
      state = seal === undefined ? carried : seal.open(request, carried);
    } catch (err) {
      if (err instanceof RequestStateRefusedError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid requestState: ${err.message}`, { reason: 'invalid_request_state' });
      throw err;
    }
  }
  const accepts = acceptedInputKinds(capabilities);
  return {
    input: {
      canElicit: accepts.form,
      accepts,
      ...(mcpReq.inputResponses ? { responses: mcpReq.inputResponses } : {}),
      ...(state !== undefined ? { requestState: state } : {}),
    },
  };
}

/** A handler's question as the `input_required` result the client reads, its state sealed for this request. */
export function inputRequiredAnswer(err: ToolInputRequiredError, request: StatefulRequest, seal: RequestStateSeal | undefined): unknown {
  const state = err.requestState === undefined || seal === undefined ? err.requestState : seal.seal(request, err.requestState);
  return inputRequired({ inputRequests: err.inputRequests as never, ...(state !== undefined ? { requestState: state } : {}) });
}
