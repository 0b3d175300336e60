/**
 * Every request the OAuth code makes has a deadline, so a silent authorization server cannot hang a
 * login or, worse, a tool call waiting on a refresh.
 */
import type { FetchLike } from '@modelcontextprotocol/client';

export const OAUTH_REQUEST_TIMEOUT_MS = 30_000;

export function fetchWithTimeout(inner: FetchLike = fetch, timeoutMs = OAUTH_REQUEST_TIMEOUT_MS): FetchLike {
  return (url, init) => {
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    return inner(url, { ...init, signal });
  };
}
