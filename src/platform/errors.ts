/**
 * The platform's refusals, each with a stable code. The HTTP layer maps the classes to status codes;
 * nothing here knows about HTTP.
 */
import { SubakoError } from '../errors.js';

/** The named thing does not exist (or is not visible to the caller). */
export class NotFoundError extends SubakoError {
  constructor(what: string, code = 'not_found') {
    super(code, `${what} was not found`);
  }
}

/** The request clashes with what exists: an immutable version published twice, a name taken. */
export class ConflictError extends SubakoError {
  constructor(message: string, code = 'conflict') {
    super(code, message);
  }
}

/** The thing cannot be removed while something else depends on it. */
export class InUseError extends SubakoError {
  constructor(message: string) {
    super('in_use', message);
  }
}

/** An upstream (a remote MCP server, a token endpoint) failed; not the caller's fault, nor ours. */
export class UpstreamError extends SubakoError {
  constructor(message: string, code = 'upstream', options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** The database cannot be reached just now (PostgreSQL down or restarting); the request may be retried. */
export class StoreUnavailableError extends SubakoError {
  constructor(options?: { cause?: unknown }) {
    super('store_unavailable', 'the database cannot be reached; retry shortly (the server reconnects by itself)', options);
  }
}

/**
 * A session was to use a vault that belongs to a user it does not act for (vault-access.ts). The message does not
 * name the owner: a session's own client reads it.
 */
export class VaultNotUsableError extends SubakoError {
  constructor(vaultId: string) {
    super('session.foreign_vault', `vault ${vaultId} belongs to a user this session does not act for; a session uses only its own user's vaults and the operator's`);
  }
}

/**
 * A consent link or an authorization callback that cannot be used: expired, altered, used already, for a session
 * or user that is gone, or refused by the person or the authorization server. Shown to the person in the browser;
 * it never carries a code or a token.
 */
export class ConnectionConsentError extends SubakoError {
  constructor(message: string, code = 'connection.consent') {
    super(code, message);
  }
}
