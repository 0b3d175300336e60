/**
 * The Tool face of one tool of a function package, wherever its runs happen (this process's FunctionHost, a
 * worker over NATS): its name and schemas from discovery, the call's deadline shortened to what its caller
 * has left, the outcome reported to the caller's sink, a cancelled run as CallCancelledError, and what the
 * model sees as the result.
 */
import { CallCancelledError, type CallToolResult, type CallWorker, type Tool, type ToolCallContext } from '../tool.js';
import type { FunctionCallOutcome, ToolInfo } from './types.js';

/**
 * Runs one call to its outcome; `callCtx` is the caller's (its signal, progress, deadline). A run elsewhere (a
 * worker over NATS) says which worker ran it.
 */
export type FunctionToolRun = (args: Record<string, unknown>, callCtx?: ToolCallContext) => Promise<FunctionCallOutcome & { worker?: CallWorker }>;

export function functionTool(pkg: { name: string; version?: string }, info: ToolInfo, run: FunctionToolRun): Tool {
  return {
    name: info.name,
    description: info.description,
    inputSchema: info.inputSchema,
    outputSchema: info.outputSchema,
    source: { kind: 'function', package: pkg.name, version: pkg.version },
    async call(args: Record<string, unknown>, callCtx?: ToolCallContext): Promise<CallToolResult> {
      const outcome = await run(args, callCtx);
      callCtx?.report?.({
        status: outcome.status, crash: outcome.crash ?? undefined, egress: outcome.egress, stderr: outcome.stderr, durationMs: outcome.durationMs,
        ...(outcome.worker ? { worker: outcome.worker } : {}),
      });
      if (outcome.status === 'cancelled') throw new CallCancelledError(info.name);
      return toModelResult(outcome);
    },
  };
}

/**
 * A call's deadline: its own, shortened to what its caller has left when the caller counts one (the time a
 * call waited for a turn is the caller's time too); never below 1 ms.
 */
export function callDeadlineMs(own: number, callerLeftMs: number | undefined): number {
  return callerLeftMs === undefined ? own : Math.max(1, Math.min(own, Math.floor(callerLeftMs)));
}

/** The result a sink hands on: what the model sees, plus structured content when the call completed. */
export function toModelResult(outcome: FunctionCallOutcome): CallToolResult {
  const result: CallToolResult = { content: outcome.model };
  if (outcome.result?.structuredContent !== undefined) result.structuredContent = outcome.result.structuredContent;
  if (outcome.status !== 'ok') result.isError = true;
  return result;
}
