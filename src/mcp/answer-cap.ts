/**
 * The byte cap on what a remote MCP server answers. A response body is read through a counting stream that
 * fails as soon as one message passes the cap, so nothing past it is buffered: for a JSON (or any other) body
 * the message is the whole body; for an event stream (SSE), each event, since one POST's stream carries a
 * request's notifications and then its result, and the standalone GET stream lives as long as the connection.
 */

/** What subako reads of one message from a remote MCP server unless told otherwise: 8 MiB. */
export const DEFAULT_MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** The error the counting stream fails with (and the reason given to the request it answered). */
export class AnswerTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the answer passed ${describeBytes(limitBytes)} in one message`);
    this.name = 'AnswerTooLargeError';
  }
}

/** "8 MiB (8388608 bytes)", or the bytes alone when not a whole number of MiB. */
export function describeBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB (${bytes} bytes)` : `${bytes} bytes`;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Counts the bytes of the message being read. An event stream's event ends at a blank line (the SSE rule:
 * lines end with CRLF, LF or CR), and its count starts again after it; any other body is one message.
 */
export class MessageMeter {
  #bytes = 0;
  #lineBytes = 0;
  #afterCr = false;
  /** The size of the event a CR just ended, which the LF of its CRLF still belongs to; -1 when none did. */
  #endedAtCr = -1;

  constructor(private readonly eventStream: boolean) {}

  /** Counts `chunk`; returns the largest size the current message reached within it. */
  add(chunk: Uint8Array): number {
    if (!this.eventStream) {
      this.#bytes += chunk.byteLength;
      return this.#bytes;
    }
    let largest = this.#bytes;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (this.#afterCr && byte === LF) {
        // The LF of a CRLF: the line already ended at its CR, and so did the event when the line was blank.
        this.#afterCr = false;
        if (this.#endedAtCr >= 0) largest = Math.max(largest, this.#endedAtCr + 1);
        else this.#bytes += 1;
        this.#endedAtCr = -1;
        continue;
      }
      this.#bytes += 1;
      if (this.#bytes > largest) largest = this.#bytes;
      this.#afterCr = byte === CR;
      this.#endedAtCr = -1;
      if (byte !== LF && byte !== CR) {
        this.#lineBytes += 1;
      } else if (this.#lineBytes === 0) {
        // A blank line: the event is complete.
        if (byte === CR) this.#endedAtCr = this.#bytes;
        this.#bytes = 0;
      } else {
        this.#lineBytes = 0;
      }
    }
    return Math.max(largest, this.#bytes);
  }
}

export function isEventStream(contentType: string | null): boolean {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() === 'text/event-stream';
}

/**
 * The response with its body read through a MessageMeter. Past `maxBytes` in one message, `onExceeded` is told
 * first (synchronously, so the request can be answered before anything else sees the failure), then the body
 * fails with AnswerTooLargeError; the pipe then cancels the network body, which aborts the HTTP response.
 */
export function capResponse(response: Response, maxBytes: number, onExceeded: (error: AnswerTooLargeError) => void): Response {
  if (response.body === null) return response;
  const meter = new MessageMeter(isEventStream(response.headers.get('content-type')));
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (meter.add(chunk) <= maxBytes) {
          controller.enqueue(chunk);
          return;
        }
        const error = new AnswerTooLargeError(maxBytes);
        onExceeded(error);
        controller.error(error);
      },
    }),
  );
  const capped = new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
  // Where the answer came from, as the original said (the SDK names it in an unfollowed redirect's error).
  Object.defineProperty(capped, 'url', { value: response.url });
  Object.defineProperty(capped, 'redirected', { value: response.redirected });
  return capped;
}
