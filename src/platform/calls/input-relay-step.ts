/**
 * The input relay as a step of a session's remote tool (input-relay.ts holds the rule), between the call log and
 * the tool's approval: it sees a retry before the approval does, and the server's question after the tool ran.
 *
 * - A retry whose state is the relay's is resumed: the tool gets its server's state and the answers to what the
 *   server asked (`ctx.resume`), and an approval the call already had stands (`ctx.resumed`: it is not asked
 *   again, and it is good once). A state of the relay's that does not fit the call is refused: the call is
 *   recorded once it has its place, and ends `denied`; the client is answered -32602 (invalid_request_state). A state that is not the relay's goes on to the approval
 *   step of a tool that has one, and is refused like a tampered one for any other tool.
 * - The tool's server is told (the request's declared capabilities) what the caller's client declared, exactly,
 *   when it is an MCP 2026-07-28 client (the server then asks only for what that client can answer, as the revision
 *   says); for a caller that cannot declare anything (a 2025-era client, REST, the library), that it may ask for a
 *   person's answers, form or URL, so that the call can at least end saying what was asked.
 * - A tool whose server answers `input_required` (McpInputRequiredError) ends this round: when the caller can
 *   answer every request, as `input_required` to it (ToolInputRequiredError with the relay's sealed state; the
 *   call log records the round as `input_required`); otherwise, to a 2026-07-28 client, as MissingRequiredClientCapability
 *   (-32021) naming what it did not declare — the revision's answer — and to a caller that cannot declare, as a result
 *   saying what input was needed. A server that refuses the call for a capability the caller lacks (-32021) ends it
 *   the same way: -32021 to a 2026-07-28 client, a result naming the capability to the others.
 */
import {
  ClientCapabilityRequiredError, INVALID_PARAMS_RPC_CODE, McpInputRequiredError, McpServerError, REQUEST_STATE_REFUSED, ToolCallRefusedError, ToolInputRequiredError,
  capabilitiesNamedFor, type InputRequestMessage,
} from '../../mcp/index.js';
import type { InputKinds, ToolInterceptor } from '../../tool.js';
import { didNotRun, type CallScope, type SessionCallContext } from './call-log.js';
import { capabilityNeededResult, inputNeededResult, unanswerable, type InputRelay } from './input-relay.js';

/** JSON-RPC's answer to a request that lacked a client capability its server needs (MCP 2026-07-28). */
const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;
/** The client capabilities a -32021 from a server is relayed for (others it may name are not the client's to give). */
const KNOWN_CAPABILITIES = new Set(['elicitation', 'sampling', 'roots']);

export function inputRelayStep(relay: InputRelay, scope: CallScope, name: string, server: string, approvalStepFollows: boolean): ToolInterceptor<SessionCallContext> {
  const sessionId = scope.session.id;
  return (next) => async (args, ctx) => {
    const input = ctx.input;
    // A 2026-07-28 client's declaration is passed on as it is; a caller that cannot declare lets the server ask for a
    // person's answers, so that the relay can at least say what was asked.
    const inputKinds: InputKinds = input?.accepts !== undefined ? { ...input.accepts } : { form: true, url: true, sampling: false, roots: false };
    let inner: SessionCallContext = { ...ctx, inputKinds };
    if (input?.requestState !== undefined) {
      const opened = relay.open(sessionId, name, args, input.requestState);
      const asked = { canElicit: input.canElicit, ...(input.accepts ? { accepts: input.accepts } : {}) };
      let refusal: string | undefined;
      if (opened.kind === 'refused') refusal = opened.reason;
      else if (opened.kind === 'not_ours' && !approvalStepFollows) refusal = 'the state it carried was not given by this server for this session (forged or altered)';
      else if (opened.kind === 'resume' && opened.approval !== undefined && !(await relay.spend(opened))) {
        refusal = 'the state it carried was already used (a continuation of an approved call is good once)';
      }
      if (refusal !== undefined) {
        const why = refusal;
        // Recorded denied; the client is answered -32602 (a state that fails its check is a JSON-RPC error, as the revision says).
        const refused = new ToolCallRefusedError(`Invalid requestState: ${why}`, { reason: 'invalid_request_state' }, REQUEST_STATE_REFUSED, INVALID_PARAMS_RPC_CODE);
        ctx.call!.onAdmitted(async () => didNotRun(name, `its input could not be taken: ${why}`, { status: 'denied', durationMs: ctx.call!.waitedMs() }, refused));
        // Nothing else reads the refused state: no approval is asked for a call that will not run.
        inner = { ...ctx, inputKinds, input: asked, resumed: {} };
      } else if (opened.kind === 'resume') {
        const responses: Record<string, unknown> = {};
        for (const key of opened.keys) {
          if (input.responses !== undefined && Object.hasOwn(input.responses, key)) {
            Object.defineProperty(responses, key, { value: input.responses[key], enumerable: true, writable: true, configurable: true });
          }
        }
        inner = {
          ...ctx, inputKinds, input: asked,
          resume: { responses, ...(opened.upstreamState !== undefined ? { requestState: opened.upstreamState } : {}) },
          resumed: opened.approval !== undefined ? { approval: opened.approval } : {},
        };
      }
    }
    try {
      return await next(args, inner);
    } catch (err) {
      const ranFor = () => (ctx.call?.runningSince != null ? performance.now() - ctx.call.runningSince : 0);
      if (err instanceof McpServerError && !(err instanceof McpInputRequiredError) && err.rpcCode === MISSING_REQUIRED_CLIENT_CAPABILITY) {
        ctx.report?.({ status: 'tool_error', durationMs: ranFor() });
        const named = (err.requiredCapabilities ?? []).filter((c): c is 'elicitation' | 'sampling' | 'roots' => KNOWN_CAPABILITIES.has(c));
        if (input?.accepts !== undefined && named.length > 0) {
          throw new ClientCapabilityRequiredError(`the tool ${name}'s server ${server} needs the client capabilit${named.length > 1 ? 'ies' : 'y'} ${named.join(', ')}, which this request did not declare`, Object.fromEntries(named.map((c) => [c, {}])));
        }
        return capabilityNeededResult(name, server, err.requiredCapabilities ?? []);
      }
      if (!(err instanceof McpInputRequiredError)) throw err;
      const requests = err.inputRequests;
      const missing = unanswerable(requests, input?.accepts);
      if (input === undefined || missing.length > 0) {
        ctx.report?.({ status: 'tool_error', durationMs: ranFor() });
        if (input?.accepts !== undefined) {
          throw new ClientCapabilityRequiredError(`the tool ${name}'s server ${server} asked for input this request did not declare it can give`, capabilitiesNamedFor(missing));
        }
        return inputNeededResult(name, server, requests, missing);
      }
      const state = relay.stateFor(sessionId, name, args, Object.keys(requests), err.requestState, ctx.call?.approval);
      throw new ToolInputRequiredError(`the tool ${name} asks its client for input`, attributed(requests, server, name), state);
    }
  };
}

/** The requests as the client's person sees them: a form's or a URL's message says which server asks, for which tool. */
function attributed(requests: Record<string, InputRequestMessage>, server: string, tool: string): Record<string, InputRequestMessage> {
  const out: Record<string, InputRequestMessage> = {};
  for (const [key, request] of Object.entries(requests)) {
    const message = request.params?.message;
    const value = request.method === 'elicitation/create' && typeof message === 'string'
      ? { ...request, params: { ...request.params, message: `The remote MCP server ${server} asks (for the tool ${tool}): ${message}` } }
      : request;
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
