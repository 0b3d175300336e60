/**
 * Approvals: a call of a tool whose agent policy is `require_approval` runs only once a person approved that
 * very call. This is the one place the rule lives; the call log (call-log.ts) asks it for every such call, from
 * every entry point, before the call takes a turn or runs anything.
 *
 * Two ways to ask, chosen by what the caller can do:
 *
 * - **The client's person** (an MCP 2026-07-28 request whose client declared form elicitation): the call is
 *   answered `input_required` with an elicitation asking to approve it, and a `requestState` that is the
 *   approval sealed (AES-256-GCM, the platform's key) with its id, the tool, the SHA-256 of the arguments'
 *   canonical JSON and an expiry, bound to the session as authenticated data. The retried request carries the
 *   answer and the state back. The state opens only for this session, names only this tool and these
 *   arguments, and its id is good once: a replayed, altered, forged or stale approval ends the call `denied`.
 *   Ids not yet redeemed are held in memory, so a restart refuses every approval issued before it.
 * - **Anyone with an API key** (every other caller: REST, the library, clients without elicitation, 2025-era
 *   clients): the call is held — in memory, as the call itself is — and listed for its session until someone
 *   approves or denies it through the API, or its deadline passes (then it is `denied`, reason `expired`). A
 *   held call takes no turn of its session's or agent's: it waits for a person, not for a worker.
 *
 * Either way the decision is kept with the call's record (`CallRecord.approval`: how it was asked, what was
 * decided, by which API key, when), so the call log is the audit trail. A session token never decides: the
 * session is the agent's side, and an approval it could give itself would be none.
 */
import { createHash } from 'node:crypto';
import { redactArguments, redactText, seal, unseal, SealError, systemClock, type Clock } from '../common/index.js';
import { ToolInputRequiredError, type Elicitation } from '../mcp/index.js';
import type { CallerInput } from '../tool.js';
import { CallRefusedError, RETRY_AFTER_MS } from './call-admission.js';
import { ConflictError, NotFoundError } from './errors.js';
import { newId } from './ids.js';
import type { CallApproval } from './store.js';

/** The key of the one input request an approval asks (and of its answer in the retried request). */
export const APPROVAL_INPUT_KEY = 'approval';

/** Calls one session may have held for a decision at once; past it, calls are refused like a full queue. */
export const MAX_HELD_PER_SESSION = 16;

/**
 * Elicited approvals not yet redeemed, per session and across sessions; past either, the oldest is forgotten
 * first (its retry is refused), so one session asking without end cannot push out another session's.
 */
const MAX_ISSUED_PER_SESSION = 64;
const MAX_ISSUED = 10_000;

/** Decisions remembered so a second decision on the same approval is told it came too late (409, not 404). */
const REMEMBERED_DECISIONS = 1_024;

/** How long an elicitation's message may grow with the arguments it shows. */
const MAX_MESSAGE_CHARS = 2_000;

/** A call held for a decision through the API, as the API lists it. */
export interface PendingApproval {
  id: string;
  sessionId: string;
  /** The call record that waits for it. */
  callId: string;
  tool: string;
  /** Redacted as the call log stores them. */
  arguments: unknown;
  createdAt: string;
  expiresAt: string;
}

/** How an approval ended for the call: run it, or end it (`denied`, or `stopped` when its session went away). */
export type Verdict =
  | { run: true; approval: CallApproval }
  | { run: false; approval: CallApproval; ending: 'denied' | 'stopped' | 'cancelled'; message: string };

/**
 * What the call log does with a call of a `require_approval` tool: redeem the approval its retry carries (once
 * the call is admitted: `redeem()` verifies and uses it up in one step), or wait for a decision on a held call.
 */
export type ApprovalPlan =
  | { kind: 'redeem'; redeem(): Verdict }
  | { kind: 'hold'; approval: CallApproval; decided: Promise<Verdict> };

export interface ApprovalsOptions {
  /** The platform's 32-byte sealing key (the state a client carries is sealed with it). */
  key: Buffer;
  /** How long a held call waits for a decision, and how long an elicited approval stays good. */
  windowMs: number;
  /** What expiry is decided against; the system clock by default. */
  clock?: Clock;
}

interface Held {
  pending: PendingApproval;
  approval: CallApproval;
  settle(verdict: Verdict): void;
}

/** The sealed content of a `requestState`. */
interface SealedApproval {
  v: 1;
  id: string;
  tool: string;
  /** SHA-256 of the arguments' canonical JSON. */
  args: string;
  /** Milliseconds since the epoch after which it is no longer good. */
  exp: number;
}

export class Approvals {
  private readonly held = new Map<string, Held>();
  /** Elicited approvals not yet redeemed: id to its session and expiry, oldest first. */
  private readonly issued = new Map<string, { sessionId: string; expiresAt: number }>();
  private readonly decided = new Map<string, string>();
  private readonly clock: Clock;

  constructor(private readonly options: ApprovalsOptions) {
    this.clock = options.clock ?? systemClock;
  }

  get windowMs(): number {
    return this.options.windowMs;
  }

  /**
   * How this call gets its approval. Throws ToolInputRequiredError to ask the client's person (nothing is
   * recorded: the call happens on the retry), and CallRefusedError when the session already has as many calls
   * held as it may.
   */
  plan(
    sessionId: string, tool: string, args: Record<string, unknown>,
    context: { callId: string; input?: CallerInput; secrets: readonly string[]; signal?: AbortSignal },
  ): ApprovalPlan {
    const { input } = context;
    if (input?.requestState !== undefined) {
      const state = input.requestState;
      const answer = input.responses?.[APPROVAL_INPUT_KEY];
      return { kind: 'redeem', redeem: () => this.redeem(sessionId, tool, args, state, answer) };
    }
    if (input?.canElicit) throw this.ask(sessionId, tool, args, context.secrets);
    return this.hold(sessionId, tool, args, context);
  }

  /** The calls of a session (or of every session) held for a decision, oldest first. */
  list(sessionId?: string): PendingApproval[] {
    return [...this.held.values()].filter((h) => sessionId === undefined || h.pending.sessionId === sessionId).map((h) => h.pending);
  }

  /**
   * Decides a held call. `by`: the deciding API key's id, kept in the call's record. Throws NotFoundError for an
   * approval this session never had held, ConflictError for one already decided (or ended at its deadline).
   */
  decide(sessionId: string, id: string, decision: 'approve' | 'deny', by: string): CallApproval {
    const held = this.held.get(id);
    if (!held || held.pending.sessionId !== sessionId) {
      const earlier = this.decided.get(`${sessionId}/${id}`);
      if (earlier) throw new ConflictError(`approval ${id} was already decided (${earlier}); an approval is decided once`, 'approval_decided');
      throw new NotFoundError(`pending approval ${id} of session ${sessionId}`);
    }
    const approved = decision === 'approve';
    const approval: CallApproval = {
      ...held.approval, decision: approved ? 'approved' : 'denied', decidedBy: by, decidedAt: this.isoNow(),
      ...(approved ? {} : { reason: 'denied through the API' }),
    };
    held.settle(approved
      ? { run: true, approval }
      : { run: false, approval, ending: 'denied', message: `a person denied this call (approval ${id})` });
    return approval;
  }

  /** Ends the held calls of a session that went away; their elicited approvals stop being good. */
  dropSession(sessionId: string): void {
    for (const held of [...this.held.values()]) {
      if (held.pending.sessionId !== sessionId) continue;
      const approval: CallApproval = { ...held.approval, decision: 'stopped', decidedAt: this.isoNow(), reason: 'its session was deleted' };
      held.settle({ run: false, approval, ending: 'stopped', message: 'its session was deleted while it waited for approval' });
    }
    for (const [id, entry] of this.issued) if (entry.sessionId === sessionId) this.issued.delete(id);
  }

  /** Ends every held call (the server is shutting down): nobody can decide them any more. */
  close(): void {
    for (const held of [...this.held.values()]) {
      const approval: CallApproval = { ...held.approval, decision: 'stopped', decidedAt: this.isoNow(), reason: 'the server shut down' };
      held.settle({ run: false, approval, ending: 'stopped', message: 'the server shut down while it waited for approval' });
    }
  }

  /** The first round: an elicitation asking the client's person, and the sealed approval the retry must carry. */
  private ask(sessionId: string, tool: string, args: Record<string, unknown>, secrets: readonly string[]): ToolInputRequiredError {
    this.forgetExpired();
    const id = newId('apr');
    const expiresAt = this.clock.now() + this.options.windowMs;
    const state: SealedApproval = { v: 1, id, tool, args: argumentsDigest(args), exp: expiresAt };
    const ofSession = [...this.issued].filter(([, entry]) => entry.sessionId === sessionId).map(([key]) => key);
    for (const old of ofSession.slice(0, Math.max(0, ofSession.length + 1 - MAX_ISSUED_PER_SESSION))) this.issued.delete(old);
    this.issued.set(id, { sessionId, expiresAt });
    while (this.issued.size > MAX_ISSUED) this.issued.delete(this.issued.keys().next().value as string);
    const shown = redactText(JSON.stringify(redactArguments(args, secrets)), secrets);
    const elicitation: Elicitation = {
      message: clip(`The agent asks to call the tool ${tool} with these arguments: ${shown}. Approve this one call?`),
      requestedSchema: {
        type: 'object',
        properties: { approve: { type: 'boolean', title: 'Approve', description: `Run ${tool} once with exactly these arguments.` } },
        required: ['approve'],
      },
    };
    const sealed = seal(JSON.stringify(state), { key: this.options.key, context: stateContext(sessionId) });
    return new ToolInputRequiredError(`the call to ${tool} needs a person's approval`, { [APPROVAL_INPUT_KEY]: elicitation }, sealed);
  }

  /** The retry: the state must open for this session and name this call, unused and in time; then the answer counts. */
  private redeem(sessionId: string, tool: string, args: Record<string, unknown>, requestState: string, answer: unknown): Verdict {
    const refuse = (id: string, reason: string, decision: CallApproval['decision'] = 'invalid'): Verdict => ({
      run: false, ending: 'denied', message: `it was not approved: ${reason}`,
      approval: { id, asked: 'elicitation', decision, decidedBy: null, decidedAt: this.isoNow(), reason },
    });
    let state: SealedApproval;
    try {
      state = parseState(unseal(requestState, { key: this.options.key, context: stateContext(sessionId) }).reveal());
    } catch (err) {
      if (!(err instanceof SealError) && !(err instanceof SyntaxError) && !(err instanceof TypeError)) throw err;
      return refuse('none', 'the approval it carried was not given by this server for this session (forged or altered)');
    }
    if (state.tool !== tool) return refuse(state.id, `the approval it carried was given for the tool ${state.tool}, not ${tool}`);
    if (state.args !== argumentsDigest(args)) return refuse(state.id, 'the approval it carried was given for other arguments');
    const issued = this.issued.get(state.id);
    if (!issued) return refuse(state.id, 'the approval it carried was already used, or this server no longer holds it (an approval is good for one call)');
    // From here the approval is spent, whatever the answer: a second retry with it is a replay.
    this.issued.delete(state.id);
    if (state.exp <= this.clock.now()) {
      return refuse(state.id, `the approval it carried expired (it is good for ${this.options.windowMs} ms)`, 'expired');
    }
    const response = answer as { action?: unknown; content?: { approve?: unknown } } | undefined;
    if (response?.action === 'accept' && response.content?.approve === true) {
      return { run: true, approval: { id: state.id, asked: 'elicitation', decision: 'approved', decidedBy: null, decidedAt: this.isoNow() } };
    }
    const why = response === undefined || response === null ? 'the retry carried no answer to the approval request'
      : response.action === 'accept' ? 'the person did not approve it' : `the person ${response.action === 'cancel' ? 'cancelled' : 'declined'} the approval request`;
    return refuse(state.id, why, 'denied');
  }

  private hold(
    sessionId: string, tool: string, args: Record<string, unknown>,
    context: { callId: string; secrets: readonly string[]; signal?: AbortSignal },
  ): ApprovalPlan {
    const held = this.list(sessionId).length;
    if (held >= MAX_HELD_PER_SESSION) {
      throw new CallRefusedError('session', RETRY_AFTER_MS,
        `session ${sessionId} already has ${held} calls waiting for approval (at most ${MAX_HELD_PER_SESSION}); decide them, or retry after ${RETRY_AFTER_MS / 1000} s`);
    }
    const id = newId('apr');
    const now = this.clock.now();
    const approval: CallApproval = { id, asked: 'api', decision: 'pending', decidedBy: null, decidedAt: null };
    const pending: PendingApproval = {
      id, sessionId, callId: context.callId, tool, arguments: redactArguments(args, context.secrets),
      createdAt: new Date(now).toISOString(), expiresAt: new Date(now + this.options.windowMs).toISOString(),
    };
    let settle!: (verdict: Verdict) => void;
    const decided = new Promise<Verdict>((resolve) => {
      const timer = setTimeout(() => {
        const reason = `nobody decided within ${this.options.windowMs} ms`;
        settle({ run: false, ending: 'denied', message: `a person did not approve it: ${reason}`, approval: { ...approval, decision: 'expired', decidedAt: this.isoNow(), reason } });
      }, this.options.windowMs);
      const onAbort = () => settle({
        run: false, ending: 'cancelled', message: 'its caller went away while it waited for approval',
        approval: { ...approval, decision: 'stopped', decidedAt: this.isoNow(), reason: 'its caller went away' },
      });
      context.signal?.addEventListener('abort', onAbort, { once: true });
      settle = (verdict) => {
        if (!this.held.delete(id)) return;
        clearTimeout(timer);
        context.signal?.removeEventListener('abort', onAbort);
        this.remember(sessionId, id, verdict.approval.decision);
        resolve(verdict);
      };
    });
    this.held.set(id, { pending, approval, settle });
    if (context.signal?.aborted) settle({ run: false, ending: 'cancelled', message: 'its caller went away', approval: { ...approval, decision: 'stopped', decidedAt: this.isoNow(), reason: 'its caller went away' } });
    return { kind: 'hold', approval, decided };
  }

  private remember(sessionId: string, id: string, decision: string): void {
    this.decided.set(`${sessionId}/${id}`, decision);
    while (this.decided.size > REMEMBERED_DECISIONS) this.decided.delete(this.decided.keys().next().value as string);
  }

  /** Issued approvals expire in the order they were issued (one window for all): drop from the oldest. */
  private forgetExpired(): void {
    const now = this.clock.now();
    for (const [id, entry] of this.issued) {
      if (entry.expiresAt > now) break;
      this.issued.delete(id);
    }
  }

  private isoNow(): string {
    return new Date(this.clock.now()).toISOString();
  }
}

/**
 * JSON with object keys sorted at every depth, so the same arguments always give the same text (and digest)
 * however a client ordered them. Arrays keep their order: it is part of the value.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What an approval is bound to of the arguments: the SHA-256 of their canonical JSON, hex. */
export function argumentsDigest(args: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(args), 'utf8').digest('hex');
}

/** The authenticated data that binds a sealed approval to its session. */
function stateContext(sessionId: string): string {
  return `subako.approval.v1:${sessionId}`;
}

function parseState(text: string): SealedApproval {
  const state = JSON.parse(text) as Partial<SealedApproval>;
  if (state.v !== 1 || typeof state.id !== 'string' || typeof state.tool !== 'string' || typeof state.args !== 'string' || typeof state.exp !== 'number') {
    throw new TypeError('not an approval');
  }
  return state as SealedApproval;
}

function clip(text: string): string {
  return text.length <= MAX_MESSAGE_CHARS ? text : `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…`;
}
