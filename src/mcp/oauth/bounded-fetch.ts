/**
 * Every request the OAuth code makes has a deadline, so a silent authorization server cannot hang a login or,
 * worse, a tool call waiting on a refresh; and a token request's answer has a size bound, so a token endpoint
 * cannot fill this process's memory with one endless answer.
 */
import type { FetchLike } from '@modelcontextprotocol/client';

export const OAUTH_REQUEST_TIMEOUT_MS = 30_000;

export function fetchWithTimeout(inner: FetchLike = fetch, timeoutMs = OAUTH_REQUEST_TIMEOUT_MS): FetchLike {
  return boundedFetch(inner, { timeoutMs });
}

export interface FetchBounds {
  /** Each request's deadline, its answer's body included; 30 s by default. */
  timeoutMs?: number;
  /** Bytes of an answer's body read at most; past them the body errors. No bound when absent. */
  maxBodyBytes?: number;
}

export function boundedFetch(inner: FetchLike = fetch, bounds: FetchBounds = {}): FetchLike {
  const timeoutMs = bounds.timeoutMs ?? OAUTH_REQUEST_TIMEOUT_MS;
  return async (url, init) => {
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    const response = await inner(url, { ...init, signal });
    return bounds.maxBodyBytes === undefined ? response : withBodyBound(response, bounds.maxBodyBytes);
  };
}

/** Statuses an answer cannot be made with a body for (the Fetch standard's null body statuses). */
const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);

/** The same answer, whose body errors once more than `maxBytes` of it have been read. */
function withBodyBound(response: Response, maxBytes: number): Response {
  if (response.body === null || NULL_BODY_STATUSES.has(response.status)) return response;
  let read = 0;
  const bounded = response.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      read += chunk.byteLength;
      if (read > maxBytes) controller.error(new RangeError(`the answer is larger than ${maxBytes} bytes`));
      else controller.enqueue(chunk);
    },
  }));
  return new Response(bounded, { status: response.status, statusText: response.statusText, headers: response.headers });
}
