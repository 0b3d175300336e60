/**
 * Idempotency keys of a session's calls: a client that lost a call's answer (its connection dropped, the server
 * answered 503) retries with the same key, and is answered the first call's outcome instead of running the tool a
 * second time. The key comes as the REST header `Idempotency-Key` or the MCP `tools/call` `_meta` field
 * `io.subako/idempotency-key`; both reach here through the call log (call-log.ts), the one place every call passes.
 *
 * - Scope: the session. A key is one session's: the same key in another session is another key. REST and MCP calls
 *   of one session share its keys (a retry may come through either).
 * - A retry must ask the same: the same tool and the same arguments (a keyed hash of both, canonical JSON). A key
 *   sent again with anything else is refused (CallKeyReusedError); nothing runs.
 * - The key is claimed in the store as the call arrives (of two claims at once, on any replicas, one wins), and
 *   holds the first call's result, sealed with the deployment's key, once it ended having run its tool. A first
 *   call that ended before its tool ran (refused a turn, past its deadline in the queue, denied, cancelled while
 *   waiting, the database out of reach before it ran) frees the key: the retry then runs.
 * - A retry while the first call still runs waits for it — at once on the replica running it, by asking the store
 *   on another — for as long as a call may run (the call deadline); past that it is refused `in progress`, and a
 *   later retry gets the outcome. A first call whose outcome is unknown (its replica stopped mid-call) is answered
 *   `unknown`, never run again.
 * - A key expires CALL_KEY_TTL_MS after its first use (then it may be used again; the sweeper prunes it).
 *
 * This process also keeps the keyed calls it runs until their key's end is in the store, so that a retry reaching
 * it while the database is down is still answered from memory (call-outbox.ts holds such ends).
 */
import { createHmac } from 'node:crypto';
import { seal, unseal, type Clock } from '../../common/index.js';
import { CallCancelledError, type CallToolResult, type ContentBlock } from '../../tool.js';
import { NotFoundError, StoreUnavailableError } from '../errors.js';
import { newId } from '../ids.js';
import type { CallKeyRecord, CallKeyStore, CallRecord, CallStore } from '../store/index.js';
import { canonicalJson } from './approvals.js';
import type { KeyEnd } from './call-outbox.js';
import { CallKeyInProgressError, CallKeyInvalidError, CallKeyReusedError, CallNotStartedError, MAX_IDEMPOTENCY_KEY_CHARS } from './call-refusals.js';

/** The `_meta` field of an MCP `tools/call` that carries the key (io.subako/ is this project's prefix, as the spec asks). */
export const IDEMPOTENCY_META_KEY = 'io.subako/idempotency-key';
/** The `_meta` field of a replayed MCP result: the id of the call whose outcome it is. */
export const REPLAYED_META_KEY = 'io.subako/replayed-call';
/** How long a key binds its first call: a day. */
export const CALL_KEY_TTL_MS = 24 * 3600_000;
/** How long a retry asks again, at most, while the first call runs on another replica. */
const MAX_POLL_MS = 1_000;
/** What a retry refused `in progress` is told to wait. */
const IN_PROGRESS_RETRY_AFTER_MS = 1_000;

/** The key as a client sent it, checked: 1-255 visible ASCII characters. `where` names where it came from. */
export function checkIdempotencyKey(value: unknown, where: string): string {
  if (typeof value !== 'string') throw new CallKeyInvalidError(where, `is ${value === null ? 'null' : typeof value}, not a string`);
  if (value.length === 0) throw new CallKeyInvalidError(where, 'is empty');
  if (value.length > MAX_IDEMPOTENCY_KEY_CHARS) throw new CallKeyInvalidError(where, `is ${value.length} characters long`);
  if (!/^[\x21-\x7e]+$/.test(value)) throw new CallKeyInvalidError(where, 'holds a character that is not visible ASCII (a space, a control character or a non-ASCII one)');
  return value;
}

/** A call that came with a key, as the call log hands it here. */
export interface KeyedCall {
  sessionId: string;
  key: string;
  /** The published name of the tool called. */
  tool: string;
  requestHash: string;
}

/** The outcome a retry is answered: the first call's record and result. */
export interface Replay {
  record: CallRecord;
  result: CallToolResult;
}

/** How a keyed call's first run ended, as the call log tells it: having run its tool (the key holds its outcome), or not. */
export type FirstCallEnd = { ran: true; replay: Replay } | { ran: false };

/** A keyed call this process runs, until its key's end is in the store. */
interface LocalCall {
  requestHash: string;
  callId: string;
  ended: Promise<FirstCallEnd>;
}

export class CallKeys {
  private readonly local = new Map<string, LocalCall>();

  constructor(
    private readonly store: CallKeyStore & Pick<CallStore, 'getCall'>,
    private readonly sealingKey: Buffer,
    private readonly clock: Clock,
  ) {}

  /** What a retry must ask the same of: the tool and the arguments, hashed with the deployment's key (nothing guessable is stored). */
  requestHash(tool: string, args: Record<string, unknown>): string {
    return createHmac('sha256', this.sealingKey).update(`subako.call-key.v1\u0000${tool}\u0000${canonicalJson(args)}`, 'utf8').digest('hex');
  }

  /**
   * A keyed call: `first(callId, ended)` runs it as the key's first call (and tells `ended` as soon as it ends),
   * or `replay` answers the first call's outcome. Waits `waitMs` at most for a first call still running.
   */
  async call(
    keyed: KeyedCall, waitMs: number, signal: AbortSignal | undefined,
    first: (callId: string, ended: (end: FirstCallEnd) => void) => Promise<CallToolResult>,
    replay: (replay: Replay) => CallToolResult,
  ): Promise<CallToolResult> {
    const id = localId(keyed.sessionId, keyed.key);
    const arrived = performance.now();
    const left = (): number => waitMs - (performance.now() - arrived);
    let pauseMs = 25;
    let missing = 0;
    for (;;) {
      const local = this.local.get(id);
      if (local) {
        if (local.requestHash !== keyed.requestHash) throw new CallKeyReusedError(keyed.key);
        const end = await within(local.ended, left(), signal);
        if (end === 'aborted') throw waitCancelled(keyed.tool);
        if (end === 'timeout') throw new CallKeyInProgressError(keyed.key, performance.now() - arrived, IN_PROGRESS_RETRY_AFTER_MS);
        if (end.ran) return replay(end.replay);
        continue; // it did not run its tool: the key is free, or about to be
      }
      const callId = newId('call');
      if (await storeOrNotStarted(() => this.store.claimCallKey(this.binding(keyed, callId), this.iso(0)))) return this.runFirst(id, keyed, callId, first);
      const bound = await storeOrNotStarted(() => this.store.getCallKey(keyed.sessionId, keyed.key));
      if (bound === null) {
        // Freed between the two reads; or the session is gone (a claim binds no key for a session that is not there).
        if ((missing += 1) >= 3) throw new NotFoundError(`session ${keyed.sessionId}`);
        continue;
      }
      if (bound.requestHash !== keyed.requestHash) throw new CallKeyReusedError(keyed.key);
      const record = await storeOrNotStarted(() => this.store.getCall(keyed.sessionId, bound.callId));
      if (bound.result !== null) return replay(this.opened(bound, record));
      if (record !== null && record.outcome !== 'running') return replay(fromRecord(record));
      // A claim whose call was never recorded, older than any call may wait: the call was refused and the claim
      // could not be given back (the database went away). Nothing ran under it; this call takes the key.
      if (record === null && this.clock.now() - Date.parse(bound.createdAt) > waitMs) {
        const to = this.binding(keyed, callId);
        if (await storeOrNotStarted(() => this.store.takeOverCallKey(keyed.sessionId, keyed.key, bound.callId, to))) return this.runFirst(id, keyed, callId, first);
        continue;
      }
      if (left() <= 0) throw new CallKeyInProgressError(keyed.key, performance.now() - arrived, IN_PROGRESS_RETRY_AFTER_MS);
      if (await pause(Math.min(pauseMs, left()), signal)) throw waitCancelled(keyed.tool);
      pauseMs = Math.min(MAX_POLL_MS, pauseMs * 2);
    }
  }

  /** What the store is told as the key's call ends: its outcome (sealed) when it ran its tool, else that the key is free. */
  keyEnd(keyed: KeyedCall, callId: string, end: FirstCallEnd): KeyEnd {
    const at = { sessionId: keyed.sessionId, key: keyed.key, callId };
    if (!end.ran) return { ...at, write: 'release' };
    return { ...at, write: { result: seal(JSON.stringify(end.replay), { key: this.sealingKey, context: resultContext(keyed.sessionId, callId) }) } };
  }

  /** The key's end is in the store (or was given up): retries are answered from there now. */
  landed(sessionId: string, key: string, callId: string): void {
    const id = localId(sessionId, key);
    if (this.local.get(id)?.callId === callId) this.local.delete(id);
  }

  private async runFirst(id: string, keyed: KeyedCall, callId: string, first: (callId: string, ended: (end: FirstCallEnd) => void) => Promise<CallToolResult>): Promise<CallToolResult> {
    let tell!: (end: FirstCallEnd) => void;
    const entry: LocalCall = { requestHash: keyed.requestHash, callId, ended: new Promise((resolve) => { tell = resolve; }) };
    this.local.set(id, entry);
    let told = false;
    const ended = (end: FirstCallEnd): void => {
      if (told) return;
      told = true;
      tell(end);
      // A key its call did not bind is free at once here; one it binds stays until its end is in the store.
      if (!end.ran && this.local.get(id) === entry) this.local.delete(id);
    };
    try {
      return await first(callId, ended);
    } finally {
      ended({ ran: false }); // ended without a word (refused before it was recorded): it bound nothing
    }
  }

  private binding(keyed: KeyedCall, callId: string): Omit<CallKeyRecord, 'result'> {
    return { sessionId: keyed.sessionId, key: keyed.key, requestHash: keyed.requestHash, callId, createdAt: this.iso(0), expiresAt: this.iso(CALL_KEY_TTL_MS) };
  }

  private iso(fromNowMs: number): string {
    return new Date(this.clock.now() + fromNowMs).toISOString();
  }

  /** The outcome a key holds; the call's record as the log now has it when it has ended (it may note a lapsed lease). */
  private opened(bound: CallKeyRecord, record: CallRecord | null): Replay {
    const kept = JSON.parse(unseal(bound.result!, { key: this.sealingKey, context: resultContext(bound.sessionId, bound.callId) }).reveal()) as Replay;
    return record !== null && record.outcome !== 'running' ? { record, result: kept.result } : kept;
  }
}

/**
 * A key whose call ended without its result kept: cut off (`unknown`: it says so, and what to do), or its result
 * left out of a full outbox (what the model saw, as the record keeps it).
 */
function fromRecord(record: CallRecord): Replay {
  if (record.outcome === 'unknown') {
    const why = record.crash?.message ?? 'the call was cut off before its end was recorded';
    return { record, result: { content: [{ type: 'text', text: `The outcome of the call to ${record.tool} is unknown: ${why}.` }], isError: true } };
  }
  return { record, result: { content: record.model as ContentBlock[], ...(record.outcome === 'ok' ? {} : { isError: true }) } };
}

const localId = (sessionId: string, key: string): string => `${sessionId}\u0000${key}`;
const resultContext = (sessionId: string, callId: string): string => `subako.call-key.v1:${sessionId}:${callId}`;

function waitCancelled(tool: string): CallCancelledError {
  return new CallCancelledError(tool, 'its caller went away while it waited for the first call with its idempotency key');
}

/** A store read or write for a call that has not run: the database out of reach means "nothing ran", said so. */
async function storeOrNotStarted<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof StoreUnavailableError) throw new CallNotStartedError({ cause: err });
    throw err;
  }
}

/** A promise's value, or why there is none yet: `ms` passed, or the signal aborted. */
async function within<T>(promise: Promise<T>, ms: number, signal: AbortSignal | undefined): Promise<T | 'timeout' | 'aborted'> {
  if (signal?.aborted) return 'aborted';
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), Math.max(0, ms)); }),
      new Promise<'aborted'>((resolve) => { onAbort = () => resolve('aborted'); signal?.addEventListener('abort', onAbort, { once: true }); }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

/** Waits `ms`; answers true when the signal aborted first. */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return (await within(new Promise<never>(() => undefined), ms, signal)) === 'aborted';
}
