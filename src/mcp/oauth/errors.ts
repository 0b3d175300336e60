/**
 * Errors of the OAuth login, of the credential store and of a refresh-token grant. (Using a credential — a
 * missing or unrefreshable one — raises `McpAuthError` from ../errors.ts, as the spec names it; these are for
 * `login` itself, for a store that cannot be read, and for a refresh that failed, which each holder of a
 * credential words for its own users.) Messages never carry a token, a code or a client secret.
 */
import { ReasonedError } from '../../errors.js';

export const LOGIN_ERROR = 'mcp.login_error';
export const CREDENTIAL_STORE_ERROR = 'mcp.credential_store_error';

/**
 * Which step of the login failed:
 * - `discovery`: no protected resource or authorization server metadata could be found or used;
 * - `registration`: dynamic client registration is not offered or was refused;
 * - `authorization`: the person or the authorization server refused, or the redirect never came;
 * - `token`: the authorization server would not exchange the code for tokens.
 */
export type LoginErrorReason = 'discovery' | 'registration' | 'authorization' | 'token';

export class LoginError extends ReasonedError<LoginErrorReason> {
  constructor(reason: LoginErrorReason, message: string, options?: { cause?: unknown }) {
    super(LOGIN_ERROR, reason, message, options);
  }
}

/**
 * - `invalid_name`: a credential name outside `[A-Za-z0-9._-]`, 1–64 characters, starting alphanumeric;
 * - `corrupt`: the credentials file or one entry is not what this version wrote;
 * - `locked`: another process held the store's lock for too long.
 */
export type CredentialStoreErrorReason = 'invalid_name' | 'corrupt' | 'locked';

export class CredentialStoreError extends ReasonedError<CredentialStoreErrorReason> {
  constructor(reason: CredentialStoreErrorReason, message: string, options?: { cause?: unknown }) {
    super(CREDENTIAL_STORE_ERROR, reason, message, options);
  }
}

export const TOKEN_REFRESH_ERROR = 'mcp.token_refresh_error';

/**
 * Why a refresh-token grant failed:
 * - `refused`: the authorization server answered with an RFC 6749 §5.2 error (invalid_grant: the refresh token
 *   expired, was revoked or was reused; invalid_client; …): only a new authorization helps;
 * - `unavailable`: it could not be reached, did not answer in time, failed itself (server_error,
 *   temporarily_unavailable), or sent no usable answer: a later retry may get past it.
 */
export type TokenRefreshErrorReason = 'refused' | 'unavailable';

export class TokenRefreshError extends ReasonedError<TokenRefreshErrorReason> {
  /** The error code the authorization server answered with, when it sent a well-formed one. */
  readonly oauthCode: string | undefined;

  constructor(reason: TokenRefreshErrorReason, message: string, oauthCode?: string) {
    super(TOKEN_REFRESH_ERROR, reason, message);
    this.oauthCode = oauthCode;
  }
}
