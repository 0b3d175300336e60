/**
 * The `tools/call` requests an endpoint is serving, by JSON-RPC id, so that a `notifications/cancelled` can reach
 * the call it names. A 2026-07-28 client over HTTP cancels by closing its request's stream (the request's signal);
 * a 2025-era client, and a stdio client relayed by `subako mcp stdio`, sends `notifications/cancelled` in a POST
 * of its own, which the SDK hands to a server made for that POST alone (the endpoint is served statelessly), where
 * no call is running: without this registry the cancellation would reach nothing.
 *
 * Ids are the client's, and several clients may hold one endpoint (its URL, or its session's token): a
 * cancellation stops a call only when exactly one call in flight has that id; with two or more it stops none,
 * since it cannot tell whose it was. (Whoever can send it holds the endpoint's credential, and could stop its
 * own calls anyway; an ambiguous one is the rare case of two clients choosing the same id at once.)
 */

import { abortWith } from '../common/index.js';

export type RequestId = string | number;

export type CancelOutcome = 'cancelled' | 'unknown' | 'ambiguous';

export interface TrackedCall {
  /** Aborted when a `notifications/cancelled` names this call, or when the signal `begin` was given aborts. */
  readonly signal: AbortSignal;
  /** The call was answered: it is no longer cancellable by id. */
  end(): void;
}

function keyOf(id: RequestId): string {
  return `${typeof id}:${id}`;
}

export class InFlightCalls {
  readonly #byId = new Map<string, Set<AbortController>>();

  /** Number of calls in flight (for tests and diagnostics). */
  get size(): number {
    let n = 0;
    for (const set of this.#byId.values()) n += set.size;
    return n;
  }

  /** `request`: the request's own signal (its stream closing); the call's follows it until `end`. */
  begin(id: RequestId, request?: AbortSignal): TrackedCall {
    const key = keyOf(id);
    const controller = new AbortController();
    const unlink = request ? abortWith(controller, request) : () => undefined;
    let set = this.#byId.get(key);
    if (set === undefined) this.#byId.set(key, (set = new Set()));
    set.add(controller);
    const calls = set;
    return {
      signal: controller.signal,
      end: () => {
        unlink();
        calls.delete(controller);
        if (calls.size === 0 && this.#byId.get(key) === calls) this.#byId.delete(key);
      },
    };
  }

  /** A `notifications/cancelled` for `requestId` (untrusted: anything that is not an id matches nothing). */
  cancel(requestId: unknown, reason?: unknown): CancelOutcome {
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return 'unknown';
    const set = this.#byId.get(keyOf(requestId));
    if (set === undefined || set.size === 0) return 'unknown';
    if (set.size > 1) return 'ambiguous';
    const [controller] = set;
    controller.abort(typeof reason === 'string' ? reason.slice(0, 200) : 'cancelled by the client');
    return 'cancelled';
  }
}
