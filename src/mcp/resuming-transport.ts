/**
 * The SDK's Streamable HTTP client transport, resuming a request's response stream and failing the request as
 * soon as that stream is gone for good.
 *
 * The SDK already resumes (SEP-1699): when a POST's SSE stream closes before the response after an event with an
 * `id`, it re-opens it with `GET` and `Last-Event-ID`, waiting the server's `retry` hint between tries, up to
 * `reconnectionOptions.maxRetries`. What it lacks is the end: once those tries are used up (or the server answers
 * the GET with 405), it tells only the caller of `subscriptions/listen`; an ordinary request is left waiting for
 * its timeout (60 s). Here every request's stream end is watched, and a request whose stream ended without its
 * response is answered at once with a JSON-RPC error carrying `marker` in its data, which the pool recognises
 * (and which a server cannot forge: the marker is a random value it never sees).
 */
import { StreamableHTTPClientTransport, type JSONRPCMessage, type StreamableHTTPClientTransportOptions } from '@modelcontextprotocol/client';

type Message = Parameters<StreamableHTTPClientTransport['send']>[0];
type SendOptions = Parameters<StreamableHTTPClientTransport['send']>[1];
type Id = string | number;

/**
 * How a response stream the server closed early is resumed (SEP-1699): the SDK waits the server's SSE `retry`
 * hint when it sent one, else 0.5 s, 1 s, 2 s; after three failed tries the call fails as a transport error.
 */
export const RESUMPTION = { maxRetries: 3, initialReconnectionDelay: 500, maxReconnectionDelay: 3000, reconnectionDelayGrowFactor: 2 };

export const STREAM_LOST_MESSAGE = 'the response stream closed before the result and could not be resumed';

export function requestIdOf(message: Message): Id | undefined {
  if (Array.isArray(message)) return undefined;
  const m = message as { method?: unknown; id?: unknown };
  return typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number') ? m.id : undefined;
}

function responseIdOf(message: Message): Id | undefined {
  const m = message as { method?: unknown; id?: unknown; result?: unknown; error?: unknown };
  if (m.method !== undefined || (m.result === undefined && m.error === undefined)) return undefined;
  return typeof m.id === 'string' || typeof m.id === 'number' ? m.id : undefined;
}

export class ResumingTransport extends StreamableHTTPClientTransport {
  readonly #marker: string;
  /** Requests sent whose response has not arrived yet. */
  readonly #pending = new Set<Id>();

  constructor(url: URL, options: StreamableHTTPClientTransportOptions, marker: string) {
    super(url, options);
    this.#marker = marker;
    // The client installs its handler after construction; seeing every message first tells which requests are
    // answered. (The base class declares `onmessage` as an own field, so an accessor must be defined here.)
    let handler: ((message: JSONRPCMessage, extra?: unknown) => void) | undefined;
    Object.defineProperty(this, 'onmessage', {
      configurable: true,
      enumerable: true,
      get: () => (handler === undefined ? undefined : this.#seen(handler)),
      set: (value: typeof handler) => {
        handler = value;
      },
    });
  }

  #seen(handler: (message: JSONRPCMessage, extra?: unknown) => void): (message: JSONRPCMessage, extra?: unknown) => void {
    return (message, extra) => {
      const id = responseIdOf(message);
      if (id !== undefined) this.#pending.delete(id);
      handler(message, extra);
    };
  }

  override async send(message: Message, options?: SendOptions): Promise<void> {
    const id = requestIdOf(message);
    if (id === undefined) return super.send(message, options);
    this.#pending.add(id);
    const theirs = options?.onRequestStreamEnd;
    const onRequestStreamEnd = () => {
      theirs?.();
      if (!this.#pending.delete(id)) return; // answered: an ordinary end of stream
      this.onmessage?.({
        jsonrpc: '2.0',
        id,
        error: { code: -32000, message: STREAM_LOST_MESSAGE, data: { streamLost: this.#marker } },
      } as JSONRPCMessage);
    };
    // A request cancelled by its signal gets no stream end; forget it so the set does not grow.
    options?.requestSignal?.addEventListener('abort', () => this.#pending.delete(id), { once: true });
    try {
      return await super.send(message, { ...options, onRequestStreamEnd });
    } catch (err) {
      this.#pending.delete(id);
      throw err;
    }
  }
}
