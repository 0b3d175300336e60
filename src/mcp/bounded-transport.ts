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
 * scheduled from that POST's stream) run inside it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FetchLike, JSONRPCMessage, StreamableHTTPClientTransportOptions } from '@modelcontextprotocol/client';
import { capResponse, describeBytes, type AnswerTooLargeError } from './answer-cap.js';
import { ResumingTransport, requestIdOf } from './resuming-transport.js';

type SendArguments = Parameters<ResumingTransport['send']>;

/** The JSON-RPC error code of the answer made up for a request whose answer passed the cap. */
export const ANSWER_TOO_LARGE_RPC_CODE = -32000;

interface RequestInFlight {
  exceeded(error: AnswerTooLargeError): void;
}

export class BoundedTransport extends ResumingTransport {
  readonly #requests: AsyncLocalStorage<RequestInFlight>;
  readonly #marker: string;

  constructor(url: URL, options: StreamableHTTPClientTransportOptions, marker: string, maxAnswerBytes: number) {
    const requests = new AsyncLocalStorage<RequestInFlight>();
    const inner: FetchLike = options.fetch ?? fetch;
    // A response outside any request (a notification's, the standalone GET stream) just fails past the cap.
    const capped: FetchLike = async (input, init) =>
      capResponse(await inner(input, init), maxAnswerBytes, (error) => requests.getStore()?.exceeded(error));
    super(url, { ...options, fetch: capped }, marker);
    this.#requests = requests;
    this.#marker = marker;
  }

  override async send(...[message, options]: SendArguments): Promise<void> {
    const id = requestIdOf(message);
    // A notification (or a response) sent while a request is in flight answers for none: its context is left.
    if (id === undefined) return this.#requests.exit(() => super.send(message, options));
    const cut = new AbortController();
    const theirs = options?.requestSignal;
    const requestSignal = theirs ? AbortSignal.any([theirs, cut.signal]) : cut.signal;
    const request: RequestInFlight = {
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
