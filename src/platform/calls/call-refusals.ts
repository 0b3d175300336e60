/**
 * A session's call refused before its tool ran, for what its idempotency key says or because the database could
 * not be reached to record it. Each is mcp/'s ToolCallRefusedError, so an MCP endpoint answers a JSON-RPC error
 * (nothing ran: not a tool result the model would read as the tool's failure); the REST API maps each class to
 * its status (server/http-error.ts). A refusal that asks for another try says when (`retryAfterMs`).
 */
import { INVALID_PARAMS_RPC_CODE, ToolCallRefusedError } from '../../mcp/index.js';

/** How long a caller refused for the database's sake is told to wait: the store reconnects by itself. */
export const STORE_RETRY_AFTER_MS = 1_000;

/** The key is not one: not a string, empty, too long, or with characters other than visible ASCII. */
export class CallKeyInvalidError extends ToolCallRefusedError {
  constructor(where: string, problem: string) {
    super(`${where} ${problem}; send 1-${MAX_IDEMPOTENCY_KEY_CHARS} visible ASCII characters (a UUID does), one key per distinct call`,
      {}, 'bad_idempotency_key', INVALID_PARAMS_RPC_CODE);
  }
}

/** The key was first used for another call of the session: another tool, or other arguments. */
export class CallKeyReusedError extends ToolCallRefusedError {
  constructor(key: string) {
    super(`the idempotency key ${JSON.stringify(key)} was already used in this session for a call with another tool or other arguments; ` +
      'a retry must send the same tool and the same arguments, and a different call needs a key of its own', {}, 'idempotency_key_reused', INVALID_PARAMS_RPC_CODE);
  }
}

/** The key's first call still runs, and the retry waited for it as long as a call may run. */
export class CallKeyInProgressError extends ToolCallRefusedError {
  constructor(key: string, waitedMs: number, readonly retryAfterMs: number) {
    super(`the first call with idempotency key ${JSON.stringify(key)} is still running (this retry waited ${Math.round(waitedMs)} ms for it); ` +
      'nothing ran again. Retry with the same key later to get its outcome', { retryAfterMs }, 'idempotency_in_progress');
  }
}

/** The database could not be reached before the call's tool ran: nothing ran, and trying again is safe. */
export class CallNotStartedError extends ToolCallRefusedError {
  readonly retryAfterMs = STORE_RETRY_AFTER_MS;
  constructor(options?: { cause?: unknown }) {
    super('the call did not run: the database cannot be reached to record it; retry shortly (the server reconnects by itself; with the same ' +
      'idempotency key a retry still runs the tool at most once)', { retryAfterMs: STORE_RETRY_AFTER_MS }, 'store_unavailable');
    // Kept for the operator's log, never shown to the caller.
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** The longest idempotency key taken (the REST API's Idempotency-Key has the same bound). */
export const MAX_IDEMPOTENCY_KEY_CHARS = 255;
