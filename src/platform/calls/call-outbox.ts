/**
 * The ends of calls the store could not take when they ended (PostgreSQL down mid-call): kept here, in this
 * process's memory, and written again with a backoff until they land, so that no call's record stays `running`
 * for good and no caller is told "retry" about a tool that ran (the caller has its outcome already; the record
 * follows). Each end is written by `land` (the call log's: the key's write, then the call's, both idempotent),
 * oldest first; the first failure pauses the lot, from RETRY_FIRST_MS doubling to RETRY_MAX_MS, and `kick` (the
 * store answered another write) tries again at once.
 *
 * Memory only, on purpose: an API replica keeps nothing on its own disk (it may have none that outlives it).
 * A replica that stops with ends still held loses them, and the calls are then marked `unknown` by whichever
 * process sees its lease lapse (platform.ts) — the call log says so rather than guessing an outcome.
 *
 * Bounded: while ends are held here no new call starts before its `running` record is written (call-log.ts
 * `startDelay`), so with the database down none starts, and what lands here is at most the calls that were in
 * flight when it went. Past MAX_HELD_BYTES an end is kept without its bulk (what the model saw, stderr, egress,
 * the result kept for its key: `compactEnd`), and past MAX_HELD_ENDS it is dropped and logged: its record then
 * stays `running` until this process's lease ends (or, for a quick call never recorded as running, is never written).
 */
import type { Logger } from '../../common/index.js';
import type { CallRecord } from '../store/index.js';

/**
 * What the store must be told of a call's idempotency key as the call ends: its outcome (sealed), that it is free
 * again (`release`), or nothing (`none`: an end kept without its bulk; the key then answers from the record).
 */
export interface KeyEnd {
  sessionId: string;
  key: string;
  callId: string;
  write: { result: string } | 'release' | 'none';
}

/** A call's end as it is written: its record and, when it had an idempotency key, the key's. */
export interface PendingEnd {
  record: CallRecord;
  /** The agent of the call's session, for the live stream's event once the end lands. */
  agentId: string | undefined;
  key?: KeyEnd;
  /** No `running` record of the call was written: the end is its first record (store `recordEndedCall`). */
  first?: boolean;
}

export const RETRY_FIRST_MS = 250;
export const RETRY_MAX_MS = 5_000;
export const MAX_HELD_BYTES = 64 * 1024 * 1024;
export const MAX_HELD_ENDS = 100_000;

export class CallOutbox {
  /** By call id, oldest first (a Map keeps insertion order). */
  private readonly held = new Map<string, { end: PendingEnd; bytes: number }>();
  private bytes = 0;
  private pauseMs = RETRY_FIRST_MS;
  private timer: NodeJS.Timeout | null = null;
  private draining: Promise<void> | null = null;
  private readonly emptied: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly land: (end: PendingEnd) => Promise<void>,
    private readonly log: Logger,
    private readonly limits: { maxBytes: number; maxEnds: number } = { maxBytes: MAX_HELD_BYTES, maxEnds: MAX_HELD_ENDS },
  ) {}

  /** How many ends are held. */
  get size(): number {
    return this.held.size;
  }

  /** Keeps an end `land` just failed to write (`err`), and writes it again later. */
  hold(end: PendingEnd, err: unknown): void {
    const id = end.record.id;
    if (this.held.has(id)) return;
    if (this.held.size >= this.limits.maxEnds) {
      this.log.error({ err, callId: id, held: this.held.size },
        `the end of call ${id} could not be written and ${this.held.size} call ends are held already: it is dropped; ` +
        'its record stays running until this server stops and another marks it unknown');
      return;
    }
    let kept = end;
    let bytes = sizeOf(kept);
    if (this.bytes + bytes > this.limits.maxBytes) {
      kept = compactEnd(end);
      bytes = sizeOf(kept);
    }
    if (this.held.size === 0) {
      this.log.warn({ err, callId: id },
        'the database cannot be reached: call ends are kept in memory and written once it is back (the callers have their outcomes already)');
    }
    this.held.set(id, { end: kept, bytes });
    this.bytes += bytes;
    this.schedule();
  }

  /** The store answered meanwhile: try the held ends now rather than at the end of the pause. */
  kick(): void {
    if (this.held.size === 0 || this.draining || this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pauseMs = RETRY_FIRST_MS;
    this.drain();
  }

  /** Resolves when every held end is written, or after `timeoutMs`: answers whether none is left. */
  async flush(timeoutMs: number): Promise<boolean> {
    if (this.held.size === 0) return true;
    this.kick();
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(this.held.size === 0), timeoutMs);
      this.emptied.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Stops trying: what is held is given up (the process is ending; another process marks those calls). */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.held.size > 0) {
      this.log.error({ held: this.held.size },
        `${this.held.size} call ends could not be written before this server stopped; their calls will be marked unknown once its lease lapses`);
    }
  }

  private schedule(): void {
    if (this.timer || this.draining || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.drain();
    }, this.pauseMs);
    this.timer.unref();
  }

  private drain(): void {
    this.draining = this.writeHeld().finally(() => {
      this.draining = null;
      if (this.held.size === 0) {
        for (const wake of this.emptied.splice(0)) wake();
      } else this.schedule();
    });
  }

  /** Writes held ends oldest first; the first that fails ends this round and lengthens the pause. */
  private async writeHeld(): Promise<void> {
    let written = 0;
    for (const [id, { end, bytes }] of this.held) {
      if (this.closed) return;
      try {
        await this.land(end);
      } catch {
        this.pauseMs = Math.min(RETRY_MAX_MS, this.pauseMs * 2);
        return;
      }
      this.held.delete(id);
      this.bytes -= bytes;
      written += 1;
    }
    this.pauseMs = RETRY_FIRST_MS;
    if (written > 0) this.log.info({ written }, `the database is back: the ${written} call ends held meanwhile are written`);
  }
}

/** An end's size as held: its record and its key's result, as JSON text. */
function sizeOf(end: PendingEnd): number {
  return JSON.stringify(end.record).length + (end.key && typeof end.key.write === 'object' ? end.key.write.result.length : 0);
}

/**
 * An end without its bulk, for an outbox past its budget: the outcome, crash and duration stay; what the model
 * saw becomes a line saying it was left out, stderr and egress go, and a key keeps no result (a retry is then
 * answered from the record: its outcome, without the result's content).
 */
export function compactEnd(end: PendingEnd): PendingEnd {
  const record: CallRecord = {
    ...end.record,
    model: [{ type: 'text', text: '(left out: the database was out of reach when the call ended and this server held too many call ends to keep it whole)' }],
    stderrTail: '',
    egress: [],
  };
  const key = end.key && typeof end.key.write === 'object' ? { ...end.key, write: 'none' as const } : end.key;
  return { record, agentId: end.agentId, ...(key ? { key } : {}) };
}
