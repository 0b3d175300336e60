/**
 * Where a remote server's `resultType: "task"` answer to a `tools/call` goes. The SDK client has no task runtime:
 * it refuses such an answer as an unsupported result type, and the task would be lost (and left running on the
 * server). So the transport takes it off the wire (bounded-transport.ts) and hands it to the sink of the operation
 * that sent the call — set here, around the send, as request-notifications.ts sets its own — and the call is
 * answered with a JSON-RPC error carrying the connection's marker in its place, which the caller recognises by
 * having been handed the task.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Receives the server's CreateTaskResult as it came (untrusted: the caller checks it). */
export type UpstreamTaskSink = (answer: Record<string, unknown>) => void;

/** The code of the error made up in place of a task answer (never seen past the remote tool, which was handed the task). */
export const UPSTREAM_TASK_RPC_CODE = -32000;

const sinks = new AsyncLocalStorage<UpstreamTaskSink>();

/** Runs `operation` so that a task answer to a `tools/call` it sends goes to `sink`. */
export function withUpstreamTaskSink<T>(sink: UpstreamTaskSink, operation: () => Promise<T>): Promise<T> {
  return sinks.run(sink, operation);
}

/** The sink of the operation sending a request now (read by the transport when the request is sent). */
export function upstreamTaskSink(): UpstreamTaskSink | undefined {
  return sinks.getStore();
}
