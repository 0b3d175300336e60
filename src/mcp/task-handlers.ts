/**
 * The tasks extension's methods on a toolbox server (task-protocol.ts says the rules): `tasks/get`,
 * `tasks/update` and `tasks/cancel`, answered from a TaskHost, refused -32021 to a request that does not declare
 * the extension, and the extension announced in `server/discover`.
 *
 * The SDK's Server checks every `tools/call` result against CallToolResult (and adds `content: []` to one without
 * it); a CreateTaskResult is not one. TaskResultServer lets a handler's `resultType: "task"` answer through as it
 * is — the SDK's own hook for role-specific handler wrapping, used for nothing else.
 */
import { Server, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { z } from 'zod';
import {
  MISSING_CLIENT_CAPABILITY_RPC_CODE, TASKS_CAPABILITY_REQUIRED, TASKS_EXTENSION, TASK_METHODS, TASK_NOT_FOUND_RPC_CODE, TaskNotFoundError, declaresTasks,
  type TaskCall, type TaskHost,
} from './task-protocol.js';
import { CLIENT_CAPABILITIES_KEY, acceptedInputKinds } from './input-requests.js';
import type { CallToolResult, CallerInput } from '../tool.js';

/** Calls a tool of the endpoint again, continuing a task's input request, with `input` as its ToolCallContext's. */
export type ToolResumer = (tool: string, args: Record<string, unknown>, input: CallerInput, signal: AbortSignal, how: TaskCall) => Promise<CallToolResult>;

/** A task id as a client may send one: bounded, visible ASCII (ours are far shorter). */
const TaskId = z.string().min(1).max(256).regex(/^[\x21-\x7e]+$/, 'a task id is visible ASCII');
const TaskParams = z.looseObject({ taskId: TaskId });
const InputResponses = z.record(z.string(), z.unknown());

type WrapHandler = Server['_wrapHandler'];
type Handler = Parameters<WrapHandler>[1];

/** A Server whose `tools/call` may answer a task handle (`resultType: "task"`) past the SDK's result check. */
export class TaskResultServer extends Server {
  protected override _wrapHandler(method: Parameters<WrapHandler>[0], handler: Handler): Handler {
    if (method !== 'tools/call') return super._wrapHandler(method, handler);
    // Keyed by the request object, which the SDK hands the same to the inner handler and to the wrapper.
    const tasks = new WeakMap<object, Awaited<ReturnType<Handler>>>();
    const checked = super._wrapHandler(method, async (request, ctx) => {
      const result = await handler(request, ctx);
      if (isTaskResult(result)) {
        tasks.set(request, result);
        return { content: [] } as never;
      }
      return result;
    });
    return async (request, ctx) => {
      const answer = await checked(request, ctx);
      return tasks.get(request) ?? answer;
    };
  }
}

function isTaskResult(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { resultType?: unknown }).resultType === 'task';
}

/** The capabilities a server with tasks announces (merged with its others). */
export const TASKS_CAPABILITIES = Object.freeze({ extensions: { [TASKS_EXTENSION]: {} } });

interface TaskRequestContext {
  /** The SDK lifts a request's `inputResponses` (multi-round-trip input's field) out of its params, to here. */
  mcpReq: { envelope?: Record<string, unknown>; inputResponses?: Record<string, unknown> };
}

/** Whether this request (its own `_meta` envelope) declares the extension: only then may it be given or use tasks. */
export function requestDeclaresTasks(ctx: { mcpReq: { envelope?: Record<string, unknown> } }): boolean {
  return declaresTasks(ctx.mcpReq.envelope?.['io.modelcontextprotocol/clientCapabilities']);
}

/**
 * Registers the `tasks/` methods on `server`, answered by `host`. `resume` continues a task whose own call asked
 * for input: the tasks/update request's declared capabilities say what the continued call may ask again.
 */
export function registerTaskMethods(server: Server, host: TaskHost, report: (error: Error) => void, resume?: ToolResumer): void {
  server.registerCapabilities(TASKS_CAPABILITIES);
  const guarded = <P>(work: (params: P, ctx: TaskRequestContext) => Promise<Record<string, unknown>>) => async (params: P, ctx: TaskRequestContext) => {
    if (!requestDeclaresTasks(ctx)) {
      throw new ProtocolError(MISSING_CLIENT_CAPABILITY_RPC_CODE as ProtocolErrorCode, `Missing required client capability: the ${TASKS_EXTENSION} extension`, TASKS_CAPABILITY_REQUIRED);
    }
    try {
      return await work(params, ctx);
    } catch (err) {
      if (err instanceof TaskNotFoundError) throw new ProtocolError(TASK_NOT_FOUND_RPC_CODE as ProtocolErrorCode, err.message);
      if (err instanceof ProtocolError) throw err;
      report(err instanceof Error ? err : new Error(String(err)));
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'the task could not be read or changed; try again');
    }
  };
  server.setRequestHandler(TASK_METHODS.get, { params: TaskParams }, guarded(async (params: z.infer<typeof TaskParams>) => ({ ...(await host.get(params.taskId)) })) as never);
  server.setRequestHandler(TASK_METHODS.update, { params: TaskParams }, guarded(async (params: z.infer<typeof TaskParams>, ctx) => {
    const responses = InputResponses.safeParse(ctx.mcpReq.inputResponses ?? (params as { inputResponses?: unknown }).inputResponses);
    if (!responses.success) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid params for tasks/update: inputResponses is an object of responses keyed as the task\'s inputRequests');
    const accepts = acceptedInputKinds(ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_KEY]);
    await host.update(params.taskId, responses.data, resume && ((tool, args, answer, signal, how) => resume(tool, args, {
      canElicit: accepts.form, accepts, responses: answer.responses, ...(answer.requestState !== undefined ? { requestState: answer.requestState } : {}),
    }, signal, how)));
    return {};
  }) as never);
  server.setRequestHandler(TASK_METHODS.cancel, { params: TaskParams }, guarded(async (params: z.infer<typeof TaskParams>) => {
    await host.cancel(params.taskId);
    return {};
  }) as never);
}
