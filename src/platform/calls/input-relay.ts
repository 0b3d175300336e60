/**
 * Input requests through a session (MCP 2026-07-28 multi-round-trip input): a remote tool whose server answers
 * `input_required` — a person's answer (form or URL elicitation), a model completion, the client's roots — has
 * its requests passed to the session's client when that client declared it can answer every one of them, and the
 * client's retry brings the answers back to the server. This is the rule; input-relay-step.ts applies it to calls.
 *
 * The server's own `requestState` never goes to the client as it is: the client gets a state of subako's, sealed
 * (AES-256-GCM, the platform key, bound to the session as authenticated data) around the server's state, the tool's
 * published name, the SHA-256 of the arguments' canonical JSON, the keys the server asked, an expiry, and — when the
 * call was approved before it ran — its approval. A retry is resumed only when its state opens for this session and
 * names this tool and these arguments, in time: then the server gets its own state back byte for byte, and only the
 * answers to what it asked. A tampered, forged, stale or misplaced state ends the call `denied`, and the server sees
 * nothing of it. A state that carries an approval is good once (spent in the store every replica shares, as an
 * elicited approval is), so a continuation cannot run an approved call twice; any other state may be retried, as
 * the server's own state may.
 *
 * A client that cannot answer what was asked (it did not declare the capability, a 2025-era client, REST, the
 * library) gets a result, not an error: the call ends saying what input was needed, and what would let it be given.
 */
import { seal, unseal, SealError, systemClock, type Clock } from '../../common/index.js';
import { inputKindOf, type InputRequestMessage } from '../../mcp/index.js';
import type { CallToolResult, InputKinds } from '../../tool.js';
import { argumentsDigest } from './approvals.js';
import { visibleJson } from './approval-view.js';
import { newId } from '../ids.js';
import type { CallApproval } from '../store/index.js';

/** How long a relayed input request may take to be answered: a person reads and fills a form. */
export const DEFAULT_INPUT_WINDOW_MS = 15 * 60_000;

export interface InputRelayOptions {
  /** The platform's 32-byte sealing key. */
  key: Buffer;
  /** Spends an id once across replicas (the store's spent approvals); false when it was spent already. */
  spendOnce: (id: string, expiresAt: string) => Promise<boolean>;
  windowMs?: number;
  clock?: Clock;
}

/** The sealed content of the state a client carries. */
interface SealedInput {
  v: 1;
  id: string;
  tool: string;
  args: string;
  keys: string[];
  exp: number;
  up?: string;
  approval?: CallApproval;
}

/** What a retried call's state says, once opened. */
export type OpenedState =
  /** Not a state of the relay's (the approval's, or something else): whoever else reads states may. */
  | { kind: 'not_ours' }
  | { kind: 'refused'; reason: string }
  | { kind: 'resume'; id: string; expiresAt: number; upstreamState?: string; keys: string[]; approval?: CallApproval };

export class InputRelay {
  private readonly clock: Clock;
  private readonly windowMs: number;

  constructor(private readonly options: InputRelayOptions) {
    this.clock = options.clock ?? systemClock;
    this.windowMs = options.windowMs ?? DEFAULT_INPUT_WINDOW_MS;
  }

  /** The state the client carries to its retry. */
  stateFor(sessionId: string, tool: string, args: Record<string, unknown>, keys: string[], upstreamState: string | undefined, approval: CallApproval | undefined): string {
    const state: SealedInput = {
      v: 1, id: newId('inp'), tool, args: argumentsDigest(args), keys, exp: this.clock.now() + this.windowMs,
      ...(upstreamState !== undefined ? { up: upstreamState } : {}), ...(approval?.decision === 'approved' ? { approval } : {}),
    };
    return seal(JSON.stringify(state), { key: this.options.key, context: stateContext(sessionId) });
  }

  /** Opens a retry's state for this session, tool and arguments. */
  open(sessionId: string, tool: string, args: Record<string, unknown>, requestState: string): OpenedState {
    let state: SealedInput;
    try {
      state = parseState(unseal(requestState, { key: this.options.key, context: stateContext(sessionId) }).reveal());
    } catch (err) {
      if (err instanceof SealError || err instanceof SyntaxError || err instanceof TypeError) return { kind: 'not_ours' };
      throw err;
    }
    if (state.tool !== tool) return { kind: 'refused', reason: `the state it carried was given for the tool ${state.tool}, not ${tool}` };
    if (state.args !== argumentsDigest(args)) return { kind: 'refused', reason: 'the state it carried was given for other arguments' };
    if (state.exp <= this.clock.now()) return { kind: 'refused', reason: `the state it carried expired (input is relayed for ${this.windowMs} ms)` };
    return {
      kind: 'resume', id: state.id, expiresAt: state.exp, keys: state.keys,
      ...(state.up !== undefined ? { upstreamState: state.up } : {}), ...(state.approval ? { approval: state.approval } : {}),
    };
  }

  /** Spends a resumed state that carries an approval: true the first time, on whichever replica. */
  spend(opened: Extract<OpenedState, { kind: 'resume' }>): Promise<boolean> {
    return this.options.spendOnce(opened.id, new Date(opened.expiresAt).toISOString());
  }
}

/** The kinds of input `requests` ask for that `accepts` does not give (all of them when the caller cannot answer any). */
export function unanswerable(requests: Record<string, InputRequestMessage>, accepts: InputKinds | undefined): (keyof InputKinds)[] {
  const kinds = [...new Set(Object.values(requests).map(inputKindOf))];
  return accepts === undefined ? kinds : kinds.filter((kind) => !accepts[kind]);
}

const CAPABILITY: Record<keyof InputKinds, string> = {
  form: 'elicitation (form)', url: 'elicitation.url', sampling: 'sampling', roots: 'roots',
};

/** What a request asks, as a person (or a model) reads it. */
function describe(request: InputRequestMessage): string {
  const params = request.params ?? {};
  switch (inputKindOf(request)) {
    case 'form': {
      const fields = Object.keys((params.requestedSchema as { properties?: object } | undefined)?.properties ?? {});
      return `a person's answer to ${visibleJson(String(params.message).slice(0, 500))}${fields.length > 0 ? ` (fields: ${fields.slice(0, 16).map((f) => visibleJson(f.slice(0, 64))).join(', ')})` : ''}`;
    }
    case 'url':
      return `a person to open ${visibleJson(String(params.url).slice(0, 500))} (${visibleJson(String(params.message).slice(0, 500))})`;
    case 'sampling':
      return 'a completion from the client\'s model (sampling)';
    case 'roots':
      return 'the client\'s roots';
  }
}

/** The result of a call whose tool needs input the caller cannot give: it says what was needed. */
export function inputNeededResult(tool: string, server: string, requests: Record<string, InputRequestMessage>, missing: (keyof InputKinds)[]): CallToolResult {
  const asked = Object.values(requests).map(describe);
  const what = asked.length > 0 ? asked.join('; ') : 'a retry carrying its state';
  const how = missing.length > 0
    ? `an MCP 2026-07-28 client that declares ${missing.map((k) => CAPABILITY[k]).join(' and ')} can give it`
    : 'an MCP 2026-07-28 client can give it';
  return {
    content: [{ type: 'text', text: `The tool ${tool} did not complete: its server ${server} needs input that this caller cannot give: ${what}. ${how[0].toUpperCase()}${how.slice(1)}.` }],
    isError: true,
  };
}

/** The result of a call whose tool's server refused it for client capabilities the caller did not declare. */
export function capabilityNeededResult(tool: string, server: string, capabilities: readonly string[]): CallToolResult {
  const named = capabilities.length > 0 ? capabilities.map((c) => visibleJson(c)).join(', ') : 'one it did not name';
  return {
    content: [{ type: 'text', text: `The tool ${tool} did not complete: its server ${server} needs input that this caller cannot give (the client capability ${named}). An MCP 2026-07-28 client that declares it can give it.` }],
    isError: true,
  };
}

function stateContext(sessionId: string): string {
  return `subako.input.v1:${sessionId}`;
}

function parseState(text: string): SealedInput {
  const state = JSON.parse(text) as Partial<SealedInput>;
  if (state.v !== 1 || typeof state.id !== 'string' || typeof state.tool !== 'string' || typeof state.args !== 'string'
    || typeof state.exp !== 'number' || !Array.isArray(state.keys) || !state.keys.every((k) => typeof k === 'string')
    || (state.up !== undefined && typeof state.up !== 'string')) {
    throw new TypeError('not an input state');
  }
  return state as SealedInput;
}
