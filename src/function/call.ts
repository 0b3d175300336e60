/**
 * One function call: start a fresh instance with the call's mounts, send one `tools/call`, read the answer,
 * close stdin, wait for exit 0, classify the run, and render what the model sees.
 */
import type { CallLimits } from '../config.js';
import { tailText, type ModuleHandle, type Sandbox, type BridgeHandler } from '../sandbox/index.js';
import type { EgressLogEntry, HttpsConnectionPool } from '../egress/index.js';
import type { CallToolResult } from '../tool.js';
import { inSpan, markFailed, startSpan } from '../common/first-call.js';
import { loadEgress } from './egress-room.js';
import { buildRequest, freshId } from './protocol.js';
import { ProgressRelay } from './progress-relay.js';
import { ConversationCrashed, GuestConversation } from './conversation.js';
import { callToolResultProblem } from './call-result.js';
import { crash, CrashReason } from './crash.js';
import { callPreopens } from './preopens.js';
import { renderCrash, renderForModel } from './render.js';
import type { FunctionCallContext, FunctionCallOutcome, PackageSource } from './types.js';

/** What a call runs on: the host's sandbox and its pool of outgoing HTTPS connections (made by the first call given egress). */
export interface CallRuntime {
  sandbox: Sandbox;
  connections(): Promise<HttpsConnectionPool>;
}

/**
 * The call as a span of its own, the guest's run, under the call's trace context: the guest's egress requests
 * are its children (they go out under its `traceparent`).
 */
export async function callFunctionTool(
  runtime: CallRuntime,
  module: ModuleHandle,
  source: PackageSource,
  toolName: string,
  args: Record<string, unknown>,
  ctx: FunctionCallContext,
  limits: CallLimits,
): Promise<FunctionCallOutcome> {
  const run = startSpan(`guest run ${toolName}`, ctx.traceparent, { 'subako.package': source.name, 'subako.package.version': source.version, 'subako.tool': toolName });
  try {
    const outcome = await inSpan(run, () => runFunctionTool(runtime, module, source, toolName, args,
      run.traceparent !== undefined ? { ...ctx, traceparent: run.traceparent } : ctx, limits));
    run.span.setAttributes({ 'subako.call.outcome': outcome.status, 'subako.egress.requests': outcome.egress.length });
    if (outcome.crash) {
      run.span.setAttribute('subako.call.crash_reason', outcome.crash.reason);
      markFailed(run.span, outcome.crash.reason);
    }
    return outcome;
  } catch (err) {
    markFailed(run.span, err instanceof Error ? err.name : 'error');
    throw err;
  } finally {
    run.span.end();
  }
}

async function runFunctionTool(
  runtime: CallRuntime,
  module: ModuleHandle,
  source: PackageSource,
  toolName: string,
  args: Record<string, unknown>,
  ctx: FunctionCallContext,
  limits: CallLimits,
): Promise<FunctionCallOutcome> {
  const { sandbox } = runtime;
  const started = performance.now();

  const egressLog: EgressLogEntry[] = [];
  const bridge: { http?: BridgeHandler } = {};
  if (ctx.egress) {
    const volume = [{ guestPath: '/volume/tmp', hostPath: ctx.tmpDir }];
    if (ctx.dataDir) volume.push({ guestPath: '/volume/data', hostPath: ctx.dataDir });
    const [{ createHttpBridge }, connections] = await Promise.all([loadEgress(), runtime.connections()]);
    bridge.http = createHttpBridge({
      connections,
      policy: ctx.egress.compiled ?? { allow: ctx.egress.allow, grants: ctx.egress.grants, privateDestinations: ctx.egress.privateDestinations ?? 'deny' },
      credentials: ctx.egress.credentials,
      volume,
      ca: ctx.egress.ca,
      log: egressLog,
      ...(ctx.traceparent !== undefined ? { traceparent: ctx.traceparent } : {}),
    });
  }

  // A caller that wants progress: the guest gets a token of ours, and its progress lines are relayed.
  const progress = ctx.progress ? new ProgressRelay(freshId('progress'), ctx.progress) : undefined;
  const conversation = new GuestConversation(limits.exitGraceMs, progress);
  const request = buildRequest('call', 'tools/call', { name: toolName, arguments: args }, progress?.token);
  const handle = sandbox.run(module, {
    args: [source.name],
    env: [],
    preopens: callPreopens(source, ctx),
    limits: {
      ...limits,
      timeoutMs: limits.callTimeoutMs,
      writeBudgetBytes: Math.min(limits.writeBudgetBytes, ctx.volumeBudget?.bytes ?? Number.POSITIVE_INFINITY),
    },
    stdin: Buffer.from(request.line),
    // The one answer ends the conversation: the sandbox gives end of file itself, without waiting for us.
    endStdinAfterAnswer: request.id,
    onStdout: conversation.onStdout,
    bridge,
  });
  // The caller going away stops the run (the sandbox kills its worker and starts a fresh one); the call ends
  // as `cancelled`, whatever the killed run looks like.
  const abort = (): void => handle.kill('the call was cancelled');
  // A signal that aborted while the call was being prepared would never fire again: stop the run at once.
  if (ctx.signal?.aborted) abort();
  else ctx.signal?.addEventListener('abort', abort, { once: true });

  let answer: unknown = null;
  let end: Awaited<ReturnType<GuestConversation['finish']>>;
  try {
    try {
      answer = await conversation.attach(handle, request, true, true);
    } catch (err) {
      if (!(err instanceof ConversationCrashed)) throw err;
    }
    end = await conversation.finish();
    ctx.volumeBudget?.settle(end.run.writtenBytes);
  } catch (err) {
    // Whatever broke the call, no held progress goes out after it.
    progress?.close();
    throw err;
  } finally {
    ctx.signal?.removeEventListener('abort', abort);
  }

  const badResult = end.crash === null ? callToolResultProblem(answer) : null;
  const crashed = end.crash ?? (badResult ? crash(CrashReason.badResult, badResult) : null);
  // The last progress goes out before the result, when there is one; after a crash or a cancel it is dropped.
  if (crashed === null && !ctx.signal?.aborted) progress?.flush();
  else progress?.close();
  const stderr = tailText(end.run.stderrTail);
  const durationMs = () => performance.now() - started;

  if (ctx.signal?.aborted) return cancelledOutcome(durationMs(), egressLog, stderr);
  if (crashed) {
    const info = { reason: crashed.reason, message: crashed.message, stderr };
    return { status: 'crash', result: null, model: renderCrash(info), crash: info, durationMs: durationMs(), egress: egressLog, stderr };
  }
  const result = answer as CallToolResult;
  // Rendering is part of the call: it gets what the guest left of the deadline, and the call's duration counts it.
  const deadline = started + limits.callTimeoutMs;
  const model = await renderForModel(result, { tmp: ctx.tmpDir, data: ctx.dataDir }, { deadline, signal: ctx.signal });
  // Gone while its images were rendered: nobody reads the result.
  if (ctx.signal?.aborted) return cancelledOutcome(durationMs(), egressLog, stderr);
  return { status: result.isError === true ? 'tool_error' : 'ok', result, model, crash: null, durationMs: durationMs(), egress: egressLog, stderr };
}

/** A call whose caller went away: not a crash, not a timeout; the result says so to whoever still looks. */
function cancelledOutcome(durationMs: number, egress: EgressLogEntry[], stderr: string): FunctionCallOutcome {
  return {
    status: 'cancelled', result: null, model: [{ type: 'text', text: 'The call was cancelled: its caller went away.' }], crash: null,
    durationMs, egress, stderr,
  };
}
