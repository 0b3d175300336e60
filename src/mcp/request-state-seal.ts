/**
 * The `requestState` a served tool, prompt or resource gives with its input requests (MCP 2026-07-28
 * multi-round-trip input) goes to the client sealed, and is opened again when the client retries: the client
 * carries it, so it is hostile on its way back. Sealed with AES-256-GCM (common/seal.ts) around the handler's own
 * state, the request it answers — method, tool or prompt name or resource URI, the SHA-256 of the arguments'
 * canonical JSON — and an expiry, a state opens only for that very request, unaltered and in time. The handler
 * then gets its own state back byte for byte; a forged, altered, misplaced or stale one is refused before any
 * handler runs (-32602, `data.reason: 'invalid_request_state'`), so a handler never has to check its own state's
 * integrity — only what the client answered, which stays untrusted.
 *
 * A served toolbox holds its key for as long as it serves (a fresh random one by default); a host that serves one
 * toolbox from several processes, or across restarts, gives the same key to each.
 */
import { randomBytes } from 'node:crypto';
import { argumentsDigest, seal, unseal, SealError } from '../common/index.js';
import { SubakoError } from '../errors.js';

export const REQUEST_STATE_REFUSED = 'input.request_state_refused';

/** A retry whose `requestState` this endpoint did not give for this request (or gave too long ago). */
export class RequestStateRefusedError extends SubakoError {
  constructor(message: string) {
    super(REQUEST_STATE_REFUSED, message);
  }
}

/** The request a state answers: the retry must be the same one. */
export interface StatefulRequest {
  method: 'tools/call' | 'prompts/get' | 'resources/read';
  /** The tool's or prompt's name, or the resource's URI. */
  name: string;
  args: Record<string, unknown>;
}

/** How long a sealed state opens: a person reads and fills a form meanwhile. */
export const DEFAULT_REQUEST_STATE_TTL_MS = 15 * 60_000;
const CONTEXT = 'subako.request-state.v1';

interface Sealed {
  v: 1;
  m: string;
  n: string;
  a: string;
  s: string;
  exp: number;
}

export class RequestStateSeal {
  private readonly key: Buffer;

  /**
   * `context` binds the seal's states to where they were given (a session's: `…:<session id>`), as authenticated data:
   * a state given under one context does not open under another.
   */
  constructor(
    key?: Buffer, private readonly ttlMs = DEFAULT_REQUEST_STATE_TTL_MS, private readonly now: () => number = Date.now, private readonly context = CONTEXT,
  ) {
    if (key !== undefined && key.length !== 32) throw new TypeError(`a request-state key has 32 bytes, not ${key.length}`);
    this.key = key ?? randomBytes(32);
  }

  /** The state the client carries for `request`. */
  seal(request: StatefulRequest, state: string): string {
    const sealed: Sealed = { v: 1, m: request.method, n: request.name, a: argumentsDigest(request.args), s: state, exp: this.now() + this.ttlMs };
    return seal(JSON.stringify(sealed), { key: this.key, context: this.context });
  }

  /** The handler's own state, when `carried` is a state this seal gave for this very request, in time. */
  open(request: StatefulRequest, carried: string): string {
    let sealed: Partial<Sealed>;
    try {
      sealed = JSON.parse(unseal(carried, { key: this.key, context: this.context }).reveal()) as Partial<Sealed>;
    } catch (err) {
      if (err instanceof SealError || err instanceof SyntaxError) throw new RequestStateRefusedError('the requestState was not given by this server (forged or altered)');
      throw err;
    }
    if (sealed.v !== 1 || typeof sealed.s !== 'string' || typeof sealed.exp !== 'number') throw new RequestStateRefusedError('the requestState was not given by this server (forged or altered)');
    if (sealed.m !== request.method || sealed.n !== request.name || sealed.a !== argumentsDigest(request.args)) {
      throw new RequestStateRefusedError('the requestState was given for another request (another method, name or arguments)');
    }
    if (sealed.exp <= this.now()) throw new RequestStateRefusedError(`the requestState expired (it is good for ${this.ttlMs} ms)`);
    return sealed.s;
  }
}
