/**
 * Approvals: a call of a tool whose agent policy asks for one runs only once that very call was approved, by whom
 * the policy names. This is the one place the rule lives; the call log (call-log.ts) asks it for every such call,
 * from every entry point, before the call takes a turn or runs anything, through the gate of the tool's policy.
 *
 * Who approves (`Approver`), chosen by the agent, per tool:
 *
 * - **An operator** (policy `require_approval`): someone with an API key, through the API or the console. The
 *   session is the agent's side: neither its token nor its capability URL, nor an answer its MCP client gives to
 *   an elicitation, ever approves such a call. Every call is held (below), whatever the client can do, and a
 *   `requestState` it carries is not looked at.
 * - **The end user** (policy `require_user_approval`): the person at the MCP client, asked through its elicitation.
 *   An MCP 2026-07-28 request whose client declared form elicitation is answered `input_required` with an
 *   elicitation whose message shows the whole call (approval-view.ts: the arguments exactly, the session's vault
 *   secrets hidden by value and located, never clipped), and a `requestState` that is the approval sealed
 *   (AES-256-GCM, the platform's key) with its id, the tool, the SHA-256 of the arguments' canonical JSON and an
 *   expiry, bound to the session as authenticated data. The retried request carries the answer and the state
 *   back. The state opens only for this session, names only this tool and these arguments, and its id is good
 *   once: a replayed, altered, forged or stale approval ends the call `denied`. Nothing is stored when it is issued
 *   (the seal is the proof, and every replica holds the key); its id is stored when it is used
 *   (`redeemed_approvals`, one insert that fails for an id already there), so a replay is refused on whichever
 *   replica it lands, and across a restart, until the approval expired anyway. A client that cannot be asked
 *   (no form elicitation, a 2025-era client, REST, the library), or a call that cannot be shown whole in a
 *   message (nested deeper than 32 levels, or a message past 8,192 characters), is held for an operator instead.
 *
 * A held call is kept by the replica it arrived at, and recorded in the store (`approvals`) with its arguments as an
 * approver is shown them: exactly, but for the session's vault secrets (hidden by value, their places listed), so
 * every replica lists it for its session, and an operator decides it through the API, until its deadline passes
 * (then it is `denied`, reason `expired`). Arguments that cannot be shown whole anywhere (nested deeper than 256
 * levels, or over 1 MiB of JSON) are not held: the call ends `denied` at once, saying why. What runs once approved is
 * the call's own arguments, checked against the digest taken when they were shown. A held call takes no turn of its
 * session's or agent's: it waits for a person, not for a worker.
 *
 * Across replicas, the store decides: every ending of a held call (a decision through the API on any replica;
 * the holder's deadline, its caller going away, its shutdown) is one conditional write that succeeds only while
 * the approval is pending, so exactly one ending wins, and a second decision is told it came too late (409). The
 * holding replica learns of a decision made elsewhere by polling its held approvals (one query for all of them,
 * every `pollMs`, only while it holds any); a decision made on the holder itself wakes the call at once. An
 * approval whose session was deleted (on any replica) is gone with it, and its held call ends `stopped`.
 *
 * Either way the decision is kept with the call's record (`CallRecord.approval`: how it was asked, what was
 * decided, by which API key, when), so the call log is the audit trail.
 */
import { argumentsDigest, canonicalJson, jsonBytes, seal, unseal, SealError, systemClock, type Clock } from '../../common/index.js';
import { ToolInputRequiredError, formElicitation, type Elicitation } from '../../mcp/index.js';
import type { CallerInput } from '../../tool.js';
import { approvalMessage, nestingDepth, showArguments } from './approval-view.js';
import { CallRefusedError, RETRY_AFTER_MS } from './call-admission.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { newId } from '../ids.js';
import type { ApprovalDecision, ApprovalStore, CallApproval, HeldApprovalRecord, Page, PageRequest, SessionStore } from '../store/index.js';

/** The key of the one input request an approval asks (and of its answer in the retried request). */
export const APPROVAL_INPUT_KEY = 'approval';

/** Calls one session may have held for a decision at once; past it, calls are refused like a full queue. */
export const MAX_HELD_PER_SESSION = 16;

/** How often a replica holding calls asks the store whether any was decided elsewhere. */
export const DEFAULT_APPROVAL_POLL_MS = 250;

/** The deepest nesting of a held call's arguments: deeper, an approver could not be shown them whole, and it is not held. */
export const MAX_HELD_DEPTH = 256;

/** The most JSON a held call's arguments may be: larger, an approver could not read them, and it is not held. */
export const MAX_HELD_ARGUMENT_BYTES = 1024 * 1024;

/** The reasons a held call is stopped with; the one for a caller gone ends it `cancelled`, the others `stopped`. */
const CALLER_GONE = 'its caller went away';
const SESSION_GONE = 'its session was deleted';
const SHUT_DOWN = 'the server shut down';

/** A call held for a decision through the API, as the API lists it: the held record without its decision. */
export type PendingApproval = Pick<HeldApprovalRecord, 'id' | 'sessionId' | 'callId' | 'tool' | 'arguments' | 'hiddenSecrets' | 'createdAt' | 'expiresAt'>;

/** One held call as the API reads it: what it lists, and how it was decided (all null while it waits). */
export type HeldApproval = PendingApproval & Pick<HeldApprovalRecord, 'decision' | 'decidedBy' | 'decidedAt' | 'reason'>;

/**
 * Who may approve a tool's calls, as the agent's policy says: `operator` (`require_approval`), or `user`
 * (`require_user_approval`: the end user through the client's elicitation; an operator when it is held).
 */
export type Approver = 'operator' | 'user';

/** What the call log asks for a tool that needs approval: the gate of its policy's approver. */
export interface ApprovalGate {
  readonly approver: Approver;
  /**
   * How this call gets its approval. Rejects with ToolInputRequiredError to ask the client's person (nothing is
   * recorded: the call happens on the retry), and CallRefusedError when the session already has as many calls
   * held as it may.
   */
  plan(sessionId: string, tool: string, args: Record<string, unknown>, context: PlanContext): Promise<ApprovalPlan>;
}

export interface PlanContext {
  callId: string;
  input?: CallerInput;
  /** The session's vault secret values: hidden, by value, from what an approver is shown. */
  secrets: readonly string[];
  signal?: AbortSignal;
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
  | { kind: 'redeem'; redeem(): Promise<Verdict> }
  | { kind: 'hold'; approval: CallApproval; decided: Promise<Verdict> };

export interface ApprovalsOptions {
  /** Where held approvals and spent approval ids are kept: the store every replica shares. */
  store: ApprovalStore & Pick<SessionStore, 'getSession'>;
  /** The platform's 32-byte sealing key (the state a client carries is sealed with it). */
  key: Buffer;
  /** How long a held call waits for a decision, and how long an elicited approval stays good. */
  windowMs: number;
  /** What expiry is decided against; the system clock by default. */
  clock?: Clock;
  /** This process among the replicas, recorded as the holder of the calls it holds; a new id by default. */
  instance?: string;
  /** How often held approvals are checked for a decision made on another replica; 250 ms by default. */
  pollMs?: number;
}

interface Held {
  sessionId: string;
  /** Set once this process has started to end it (a write in flight): it is not ended twice from here. */
  ending: boolean;
  /** Wakes the call with its verdict, once; later calls do nothing. */
  finish(verdict: Verdict): void;
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
  /** The calls this process holds (their callers wait here), by approval id. */
  private readonly held = new Map<string, Held>();
  private readonly clock: Clock;
  private readonly store: ApprovalsOptions['store'];
  readonly instance: string;
  private readonly pollMs: number;
  private poller: NodeJS.Timeout | null = null;
  private polling = false;
  private readonly gates: Record<Approver, ApprovalGate>;

  constructor(private readonly options: ApprovalsOptions) {
    this.clock = options.clock ?? systemClock;
    this.store = options.store;
    this.instance = options.instance ?? newId('inst');
    this.pollMs = options.pollMs ?? DEFAULT_APPROVAL_POLL_MS;
    const gate = (approver: Approver): ApprovalGate => Object.freeze({ approver, plan: (...args: Parameters<ApprovalGate['plan']>) => this.plan(approver, ...args) });
    this.gates = { operator: gate('operator'), user: gate('user') };
  }

  /** The gate of the tools whose calls `approver` approves. */
  gate(approver: Approver): ApprovalGate {
    return this.gates[approver];
  }

  get windowMs(): number {
    return this.options.windowMs;
  }

  private async plan(approver: Approver, sessionId: string, tool: string, args: Record<string, unknown>, context: PlanContext): Promise<ApprovalPlan> {
    const { input } = context;
    if (approver === 'user') {
      if (input?.requestState !== undefined) {
        const state = input.requestState;
        const answer = input.responses?.[APPROVAL_INPUT_KEY];
        return { kind: 'redeem', redeem: () => this.redeem(sessionId, tool, args, state, answer) };
      }
      const message = input?.canElicit ? approvalMessage(tool, args, context.secrets) : null;
      if (message !== null) throw this.ask(sessionId, tool, args, message);
    }
    // An operator decides: the policy says so, or the end user cannot be asked, or not be shown the whole call.
    return this.hold(sessionId, tool, args, context);
  }

  /** The calls of a session (or of every session) held for a decision, on any replica, oldest first, a page at a time. */
  async list(page: PageRequest, sessionId?: string): Promise<Page<PendingApproval>> {
    const found = await this.store.pendingApprovals(this.isoNow(), page, sessionId);
    return { items: found.items.map(pendingOf), next_cursor: found.next_cursor };
  }

  /**
   * One held call, pending or decided (until it is forgotten, after its expiry): of the session named, or, without
   * one, of whichever session holds it (an operator who has the approval's id only: /v1/approvals/{id}).
   */
  async get(sessionId: string | null, id: string): Promise<HeldApproval> {
    const rec = await this.store.getApproval(id);
    if (!rec || (sessionId !== null && rec.sessionId !== sessionId)) throw new NotFoundError(sessionId === null ? `approval ${id}` : `approval ${id} of session ${sessionId}`);
    return { ...pendingOf(rec), decision: rec.decision, decidedBy: rec.decidedBy, decidedAt: rec.decidedAt, reason: rec.reason };
  }

  /**
   * Decides a held call, whichever replica holds it. `by`: the deciding API key's id, kept in the call's record.
   * Throws NotFoundError for an approval this session never had held, ConflictError for one already decided (or
   * ended at its deadline, or while its decision was being made elsewhere).
   */
  async decide(sessionId: string, id: string, decision: 'approve' | 'deny', by: string, reason?: string): Promise<CallApproval> {
    const approved = decision === 'approve';
    const decidedAt = this.isoNow();
    // The operator's reason, when given, is kept and (on a denial) is what the model reads of why.
    const ending: ApprovalDecision = { decision: approved ? 'approved' : 'denied', decidedBy: by, decidedAt, reason: reason ?? (approved ? null : 'denied through the API') };
    if (!(await this.store.decideApproval(id, ending, { sessionId, openAt: decidedAt }))) {
      const rec = await this.store.getApproval(id);
      if (!rec || rec.sessionId !== sessionId) throw new NotFoundError(`pending approval ${id} of session ${sessionId}`);
      if (rec.decision !== null) throw new ConflictError(`approval ${id} was already decided (${rec.decision}); an approval is decided once`, 'approval_decided');
      const why = rec.expiresAt <= decidedAt ? `it expired at ${rec.expiresAt}` : 'its call is no longer waiting: the server holding it stopped';
      throw new ConflictError(`approval ${id} can no longer be decided (${why})`, 'approval_decided');
    }
    const verdict = verdictOf(id, ending);
    // Held here: the call wakes now (held elsewhere, its replica's next poll finds the decision).
    this.held.get(id)?.finish(verdict);
    return verdict.approval;
  }

  /** Ends the held calls of a session that went away (its approvals went with it, from the store). */
  dropSession(sessionId: string): void {
    for (const [id, held] of [...this.held]) {
      if (held.sessionId === sessionId) held.finish(verdictOf(id, { decision: 'stopped', decidedBy: null, decidedAt: this.isoNow(), reason: SESSION_GONE }));
    }
  }

  /** Ends every held call (the server is shutting down): nobody can decide them any more. */
  close(): void {
    this.stopPolling();
    for (const id of [...this.held.keys()]) void this.end(id, { decision: 'stopped', decidedBy: null, decidedAt: this.isoNow(), reason: SHUT_DOWN });
  }

  /** The first round: an elicitation asking the client's person, and the sealed approval the retry must carry. */
  private ask(sessionId: string, tool: string, args: Record<string, unknown>, message: string): ToolInputRequiredError {
    const id = newId('apr');
    const expiresAt = this.clock.now() + this.options.windowMs;
    const state: SealedApproval = { v: 1, id, tool, args: argumentsDigest(args), exp: expiresAt };
    const elicitation: Elicitation = {
      message,
      requestedSchema: {
        type: 'object',
        properties: { approve: { type: 'boolean', title: 'Approve', description: `Run ${tool} once with exactly these arguments.` } },
        required: ['approve'],
      },
    };
    const sealed = seal(JSON.stringify(state), { key: this.options.key, context: stateContext(sessionId) });
    return new ToolInputRequiredError(`the call to ${tool} needs a person's approval`, { [APPROVAL_INPUT_KEY]: formElicitation(elicitation) }, sealed);
  }

  /** The retry: the state must open for this session and name this call, in time and unused; then the answer counts. */
  private async redeem(sessionId: string, tool: string, args: Record<string, unknown>, requestState: string, answer: unknown): Promise<Verdict> {
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
    // Approvals are given only for arguments shown whole, so deeper ones are other arguments (and never walked).
    if (nestingDepth(args, MAX_HELD_DEPTH) > MAX_HELD_DEPTH || state.args !== argumentsDigest(args)) return refuse(state.id, 'the approval it carried was given for other arguments');
    // A stale approval is refused before it is spent: it can never be used again anyway, and nothing is stored for it.
    if (state.exp <= this.clock.now()) {
      return refuse(state.id, `the approval it carried expired (it is good for ${this.options.windowMs} ms)`, 'expired');
    }
    // From here the approval is spent, whatever the answer: a second retry with it, on any replica, is a replay.
    if (!(await this.store.redeemApproval(state.id, new Date(state.exp).toISOString()))) {
      return refuse(state.id, 'the approval it carried was already used (an approval is good for one call); ask for a new one by calling again without it');
    }
    const response = answer as { action?: unknown; content?: { approve?: unknown } } | undefined;
    if (response?.action === 'accept' && response.content?.approve === true) {
      return { run: true, approval: { id: state.id, asked: 'elicitation', decision: 'approved', decidedBy: null, decidedAt: this.isoNow() } };
    }
    const why = response === undefined || response === null ? 'the retry carried no answer to the approval request'
      : response.action === 'accept' ? 'the person did not approve it' : `the person ${response.action === 'cancel' ? 'cancelled' : 'declined'} the approval request`;
    return refuse(state.id, why, 'denied');
  }

  private async hold(sessionId: string, tool: string, args: Record<string, unknown>, context: PlanContext): Promise<ApprovalPlan> {
    const id = newId('apr');
    const now = this.clock.now();
    const approval: CallApproval = { id, asked: 'api', decision: 'pending', decidedBy: null, decidedAt: null };
    const unshowable = this.unshowable(args);
    if (unshowable !== null) return { kind: 'hold', approval, decided: Promise.resolve(this.notRun(id, 'denied', `was not held for approval: ${unshowable}`)) };
    const shown = showArguments(args, context.secrets);
    const digest = argumentsDigest(args);
    const record: HeldApprovalRecord = {
      id, sessionId, callId: context.callId, tool, arguments: shown.arguments, hiddenSecrets: shown.hidden,
      createdAt: new Date(now).toISOString(), expiresAt: new Date(now + this.options.windowMs).toISOString(),
      holder: this.instance, decision: null, decidedBy: null, decidedAt: null, reason: null,
    };
    if (!(await this.store.holdApproval(record, MAX_HELD_PER_SESSION, record.createdAt))) {
      // Not held: its session was deleted at this very moment (the call ends as any call of a deleted session
      // does), or the session's held calls are at their bound.
      if ((await this.store.getSession(sessionId)) === null) {
        return { kind: 'hold', approval, decided: Promise.resolve(verdictOf(id, { decision: 'stopped', decidedBy: null, decidedAt: this.isoNow(), reason: SESSION_GONE })) };
      }
      throw new CallRefusedError('session', RETRY_AFTER_MS,
        `session ${sessionId} already has ${MAX_HELD_PER_SESSION} calls waiting for approval (at most ${MAX_HELD_PER_SESSION}); decide them, or retry after ${RETRY_AFTER_MS / 1000} s`);
    }
    const stop = (reason: string, decision: ApprovalDecision['decision'] = 'stopped') =>
      void this.end(id, { decision, decidedBy: null, decidedAt: this.isoNow(), reason });
    const timer = setTimeout(() => stop(`nobody decided within ${this.options.windowMs} ms`, 'expired'), this.options.windowMs);
    const onAbort = () => stop(CALLER_GONE);
    const waited = new Promise<Verdict>((resolve) => {
      this.held.set(id, {
        sessionId, ending: false,
        finish: (verdict) => {
          if (!this.held.delete(id)) return;
          clearTimeout(timer);
          context.signal?.removeEventListener('abort', onAbort);
          if (this.held.size === 0) this.stopPolling();
          resolve(verdict);
        },
      });
    });
    context.signal?.addEventListener('abort', onAbort, { once: true });
    this.startPolling();
    if (context.signal?.aborted) onAbort();
    // What runs is what was shown: arguments changed since (by anything in this process) are not what was approved.
    const decided = waited.then((verdict) => (verdict.run && argumentsDigest(args) !== digest
      ? this.notRun(id, 'invalid', 'was approved for arguments that changed after they were shown', verdict.approval) : verdict));
    return { kind: 'hold', approval, decided };
  }

  /** Why these arguments cannot be shown to an approver whole (then the call is not held), or null. */
  private unshowable(args: Record<string, unknown>): string | null {
    if (nestingDepth(args, MAX_HELD_DEPTH) > MAX_HELD_DEPTH) {
      return `its arguments nest deeper than ${MAX_HELD_DEPTH} levels, more than an approver can be shown whole`;
    }
    const bytes = jsonBytes(args);
    if (bytes > MAX_HELD_ARGUMENT_BYTES) {
      return `its arguments are ${bytes} bytes of JSON, more than the ${MAX_HELD_ARGUMENT_BYTES} an approver can be shown whole`;
    }
    return null;
  }

  /**
   * A held call's end without running, decided here rather than by a person: `reason` is kept in its record, and
   * the model reads `it <reason>`. `decided`: the decision it overrides (an approval that no longer fits the call).
   */
  private notRun(id: string, decision: 'denied' | 'invalid', reason: string, decided?: CallApproval): Verdict {
    return {
      run: false, ending: 'denied', message: `it ${reason}`,
      approval: { id, asked: 'api', decision, decidedBy: decided?.decidedBy ?? null, decidedAt: decided?.decidedAt ?? this.isoNow(), reason },
    };
  }

  /**
   * Ends a held call from this process (its deadline, its caller gone, a shutdown): the ending is written only if
   * the approval is still pending; if a decision won meanwhile (on any replica), that decision is the verdict.
   * Every ending written from here leaves the call unrun, so when the store cannot be reached the call ends
   * as decided here: it fails closed.
   */
  private async end(id: string, ending: ApprovalDecision): Promise<void> {
    const held = this.held.get(id);
    if (!held || held.ending) return;
    held.ending = true;
    let verdict = verdictOf(id, ending);
    try {
      if (!(await this.store.decideApproval(id, ending))) {
        const rec = await this.store.getApproval(id);
        if (rec === null) verdict = verdictOf(id, { ...ending, decision: 'stopped', reason: SESSION_GONE });
        else if (rec.decision !== null) verdict = verdictOf(id, recordedEnding(rec));
      }
    } catch {
      // The store is unreachable: the ending decided here stands (nothing runs).
    }
    held.finish(verdict);
  }

  private startPolling(): void {
    if (this.poller !== null) return;
    this.poller = setInterval(() => void this.poll(), this.pollMs);
    // Held calls keep their callers' requests open, so the process is kept alive by those, not by this.
    this.poller.unref();
  }

  private stopPolling(): void {
    if (this.poller !== null) clearInterval(this.poller);
    this.poller = null;
  }

  /** One query for every call held here: those decided elsewhere (or gone with their session) wake with that. */
  private async poll(): Promise<void> {
    if (this.polling || this.held.size === 0) return;
    this.polling = true;
    try {
      for (const { id, record } of await this.store.settledApprovals([...this.held.keys()])) {
        const ending = record === null ? { decision: 'stopped' as const, decidedBy: null, decidedAt: this.isoNow(), reason: SESSION_GONE } : recordedEnding(record);
        this.held.get(id)?.finish(verdictOf(id, ending));
      }
    } catch {
      // The store is unreachable just now: the next tick asks again, and each held call still ends at its deadline.
    } finally {
      this.polling = false;
    }
  }

  private isoNow(): string {
    return new Date(this.clock.now()).toISOString();
  }
}

/** A decided record's ending (only called for one whose decision is set). */
function recordedEnding(rec: HeldApprovalRecord): ApprovalDecision {
  return { decision: rec.decision ?? 'stopped', decidedBy: rec.decidedBy, decidedAt: rec.decidedAt ?? rec.expiresAt, reason: rec.reason };
}

/**
 * What a held call's ending means for it, the same on every replica whoever wrote it: approved, it runs; denied
 * or expired, it ends `denied`; stopped because its caller went away, `cancelled`; otherwise `stopped`.
 */
export function verdictOf(id: string, ending: ApprovalDecision): Verdict {
  const approval: CallApproval = {
    id, asked: 'api', decision: ending.decision, decidedBy: ending.decidedBy, decidedAt: ending.decidedAt,
    ...(ending.reason !== null && ending.decision !== 'approved' ? { reason: ending.reason } : {}),
  };
  switch (ending.decision) {
    case 'approved':
      return { run: true, approval };
    case 'denied':
      return { run: false, approval, ending: 'denied', message: `a person denied this call (approval ${id})` };
    case 'expired':
      return { run: false, approval, ending: 'denied', message: `a person did not approve it: ${ending.reason ?? 'nobody decided in time'}` };
    case 'stopped': {
      const reason = ending.reason ?? SHUT_DOWN;
      return { run: false, approval, ending: reason === CALLER_GONE ? 'cancelled' : 'stopped', message: `${reason} while it waited for approval` };
    }
  }
}

// The canonical form and digest moved to common/ (request states use them too); still offered here.
export { argumentsDigest, canonicalJson };

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

function pendingOf(rec: HeldApprovalRecord): PendingApproval {
  return {
    id: rec.id, sessionId: rec.sessionId, callId: rec.callId, tool: rec.tool, arguments: rec.arguments, hiddenSecrets: rec.hiddenSecrets,
    createdAt: rec.createdAt, expiresAt: rec.expiresAt,
  };
}
