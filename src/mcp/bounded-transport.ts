/**
 * The resuming Streamable HTTP transport, reading every response through the answer cap (answer-cap.ts). When
 * the answer to a request passes the cap, that request is answered at once with a JSON-RPC error carrying the
 * connection's marker (which the pool recognises and a server cannot forge), and its HTTP exchange is aborted
 * through the request's own signal: the SDK treats that as a deliberate end, so it neither reports a broken
 * stream nor resumes it (a resumption would only fetch the same answer again). The connection and the other
 * requests on it are untouched.
 *
 * Which request a response belongs to is known from where the fetch runs: each request's send runs in an
 * async context of its own, and the SDK's fetches for it (the POST, and the GETs that resume its stream,
 * scheduled from that POST's stream) run inside it. The same context routes a request's `notifications/message`
 * to the caller that sent it (request-notifications.ts), when that caller gave a sink; otherwise it goes to the
 * client's handlers as any notification does.
 *
 * A `tools/call` answer without `resultType` is read as `complete`: the revision tells clients to treat an absent
 * value so (SEP-2322; the conformance suite's `sep-2322-default-result-type-complete` requires it of a 2026-07-28
 * client), while the SDK refuses it from a 2026-07-28 server. Only `tools/call` answers, whose ids this transport
 * saw go out: nothing else the SDK decides on (a `server/discover` probe's era) is changed.
 *
 * A `tools/call` answered with a task (`resultType: "task"`, the tasks extension, which the SDK client cannot take)
 * goes to the sink its sender set (upstream-task-sink.ts), and the request is answered with an error carrying the
 * marker in its place; without a sink (a call that did not declare tasks, which a server must not answer so) it
 * reaches the SDK as it came, which refuses it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FetchLike, JSONRPCMessage, StreamableHTTPClientTransportOptions } from '@modelcontextprotocol/client';
import { capResponse, describeBytes, type AnswerTooLargeError } from './answer-cap.js';
import { ResumingTransport, requestIdOf } from './resuming-transport.js';
import { REQUEST_SCOPED_METHODS, requestNotificationSink, type RequestNotification, type RequestNotificationSink } from './request-notifications.js';
import { UPSTREAM_TASK_RPC_CODE, upstreamTaskSink, type UpstreamTaskSink } from './upstream-task-sink.js';

type SendArguments = Parameters<ResumingTransport['send']>;

/** The JSON-RPC error code of the answer made up for a request whose answer passed the cap. */
export const ANSWER_TOO_LARGE_RPC_CODE = -32000;

interface RequestInFlight {
  exceeded(error: AnswerTooLargeError): void;
  /** Where this request's request-scoped notifications go, when its caller gave a sink. */
  notifications?: RequestNotificationSink;
}

/** `tools/call` ids awaiting an answer kept at most, per connection (far above the calls one connection carries at once). */
const MAX_TRACKED_TOOL_CALLS = 4096;

type MessageHandler = (message: JSONRPCMessage, extra?: unknown) => void;

export class BoundedTransport extends ResumingTransport {
  readonly #requests: AsyncLocalStorage<RequestInFlight>;
  readonly #marker: string;
  /**
   * The ids of `tools/call` requests awaiting their answer (see the top: an absent resultType reads as complete),
   * each with the sink its task answer goes to, when its sender set one.
   */
  readonly #toolCalls = new Map<string | number, UpstreamTaskSink | undefined>();

  constructor(url: URL, options: StreamableHTTPClientTransportOptions, marker: string, maxAnswerBytes: number) {
    const requests = new AsyncLocalStorage<RequestInFlight>();
    const inner: FetchLike = options.fetch ?? fetch;
    // A response outside any request (a notification's, the standalone GET stream) just fails past the cap.
    const capped: FetchLike = async (input, init) =>
      capResponse(await inner(input, init), maxAnswerBytes, (error) => requests.getStore()?.exceeded(error));
    super(url, { ...options, fetch: capped }, marker);
    this.#requests = requests;
    this.#marker = marker;
    // Messages pass through here before the client's handler (ResumingTransport's accessor, wrapped once more).
    const inherited = Object.getOwnPropertyDescriptor(this, 'onmessage')!;
    Object.defineProperty(this, 'onmessage', {
      configurable: true,
      enumerable: true,
      get: () => {
        const handler = inherited.get!.call(this) as MessageHandler | undefined;
        return handler === undefined ? undefined : this.#routed(handler);
      },
      set: (value: MessageHandler | undefined) => inherited.set!.call(this, value),
    });
  }

  /** A request-scoped notification read on a request's stream goes to that request's caller, when it gave a sink. */
  #routed(handler: MessageHandler): MessageHandler {
    return (message, extra) => {
      const m = message as { method?: unknown; id?: unknown; params?: unknown; result?: unknown };
      if (m.method === undefined && (typeof m.id === 'string' || typeof m.id === 'number') && this.#toolCalls.has(m.id)) {
        const taskSink = this.#toolCalls.get(m.id);
        this.#toolCalls.delete(m.id);
        message = taskSink !== undefined && isTaskAnswer(m.result) ? this.#taskTaken(m.id, m.result, taskSink) : withCompleteByDefault(message);
      }
      const sink = typeof m.method === 'string' && m.id === undefined && REQUEST_SCOPED_METHODS.has(m.method)
        ? this.#requests.getStore()?.notifications : undefined;
      if (sink === undefined) return handler(message, extra);
      try {
        sink({ method: m.method as string, params: m.params } satisfies RequestNotification);
      } catch {
        // The sink is the caller's; its failure is not the connection's.
      }
    };
  }

  /** Hands a task answer to its sink, and answers the request with the error that stands in for it. */
  #taskTaken(id: string | number, answer: Record<string, unknown>, sink: UpstreamTaskSink): JSONRPCMessage {
    try {
      sink(answer);
    } catch {
      // The sink is the caller's; it sees the error below either way.
    }
    return {
      jsonrpc: '2.0', id,
      error: { code: UPSTREAM_TASK_RPC_CODE, message: 'the server answered the call with a task', data: { upstreamTask: this.#marker } },
    } as JSONRPCMessage;
  }

  override async send(...[message, options]: SendArguments): Promise<void> {
    const id = requestIdOf(message);
    // A notification (or a response) sent while a request is in flight answers for none: its context is left.
    if (id === undefined) return this.#requests.exit(() => super.send(message, options));
    const cut = new AbortController();
    const theirs = options?.requestSignal;
    const requestSignal = theirs ? AbortSignal.any([theirs, cut.signal]) : cut.signal;
    if ((message as { method?: unknown }).method === 'tools/call') {
      // Forgotten with its answer, or when the request is given up (cancelled, cut off) and none will come.
      this.#toolCalls.set(id, upstreamTaskSink());
      // A request the SDK gives up on without aborting (its own timeout) leaves its id here: the oldest go first,
      // so the set stays bounded on a connection that lives for days.
      if (this.#toolCalls.size > MAX_TRACKED_TOOL_CALLS) this.#toolCalls.delete(this.#toolCalls.keys().next().value!);
      requestSignal.addEventListener('abort', () => this.#toolCalls.delete(id), { once: true });
    }
    const notifications = requestNotificationSink();
    const request: RequestInFlight = {
      ...(notifications !== undefined ? { notifications } : {}),
      exceeded: (error) => {
        if (cut.signal.aborted) return;
        this.onmessage?.({
          jsonrpc: '2.0',
          id,
          error: {
            code: ANSWER_TOO_LARGE_RPC_CODE,
            message: `the answer passed ${describeBytes(error.limitBytes)} in one message and was cut off there`,
            data: { answerTooLarge: this.#marker, limitBytes: error.limitBytes },
          },
        } as JSONRPCMessage);
        cut.abort(error);
      },
    };
    return this.#requests.run(request, () => super.send(message, { ...options, requestSignal }));
  }
}

function isTaskAnswer(result: unknown): result is Record<string, unknown> {
  return typeof result === 'object' && result !== null && !Array.isArray(result) && (result as { resultType?: unknown }).resultType === 'task';
}

/** A response whose result has no `resultType`, with `resultType: "complete"`; any other message as it is. */
function withCompleteByDefault(message: JSONRPCMessage): JSONRPCMessage {
  const result = (message as { result?: unknown }).result;
  if (typeof result !== 'object' || result === null || Array.isArray(result) || 'resultType' in result) return message;
  return { ...message, result: { ...result, resultType: 'complete' } } as JSONRPCMessage;
}
