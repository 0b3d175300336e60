/**
 * A fresh access token for a stored credential: the stored one while it has more than a minute left,
 * else a refresh (RFC 6749 §6, with the RFC 8707 resource) whose rotated refresh token is written back
 * before the new access token is handed out. Refreshes of one credential are serialised: within the
 * process by sharing one promise, across processes by the store's lock (and a re-read under it, so a
 * refresh another process just made is used instead of spending the rotated-out refresh token again).
 * A machine's credential (the client-credentials grant) without a refresh token runs its grant again instead.
 */
import type { FetchLike } from '@modelcontextprotocol/client';
import { McpAuthError, McpServerError } from '../errors.js';
import { Secret } from '../../common/index.js';
import type { CredentialFile } from './credential-file.js';
import { parseCredential, storedTokens, type StoredCredential } from './credential.js';
import { TokenRefreshError } from './errors.js';
import { needsRefresh, refreshTokens, REFRESH_EARLY_MS } from './token-refresh.js';
import { clientCredentialsClientOf, clientCredentialsGrant } from './client-credentials-grant.js';

export interface AccessTokenOptions {
  /** Refresh even if the stored token looks fresh (the server just refused it). */
  forceRefresh?: boolean;
  fetch?: FetchLike;
  now?: () => number;
  /** How long before expiry to refresh; 60 s by default. */
  refreshEarlyMs?: number;
}

const inflight = new Map<string, Promise<Secret>>();

export async function freshAccessToken(file: CredentialFile, name: string, options: AccessTokenOptions = {}): Promise<Secret> {
  const now = options.now ?? Date.now;
  const early = options.refreshEarlyMs ?? REFRESH_EARLY_MS;
  const current = await load(file, name);
  if (!options.forceRefresh && !needsRefresh(current.tokens.expiresAt, now(), early)) return new Secret(current.tokens.accessToken);

  const key = `${file.path}\n${name}`;
  let pending = inflight.get(key);
  if (pending === undefined) {
    pending = refresh(file, name, current.tokens.accessToken, options, now, early).finally(() => inflight.delete(key));
    inflight.set(key, pending);
  }
  return pending;
}

async function load(file: CredentialFile, name: string): Promise<StoredCredential> {
  const text = await file.read(name);
  if (text === undefined) throw missing(name);
  return parseCredential(text, name);
}

function missing(name: string): McpAuthError {
  return new McpAuthError('missing', `there is no OAuth credential named "${name}": run \`subako mcp login --url <server> --name ${name}\``, {
    credential: name,
  });
}

async function refresh(
  file: CredentialFile,
  name: string,
  seenAccessToken: string,
  options: AccessTokenOptions,
  now: () => number,
  early: number,
): Promise<Secret> {
  return file.update(async (editor) => {
    const text = editor.read(name);
    if (text === undefined) throw missing(name);
    const credential = parseCredential(text, name);
    const tokens = credential.tokens;
    const replacedMeanwhile = tokens.accessToken !== seenAccessToken;
    if (!needsRefresh(tokens.expiresAt, now(), early) && (!options.forceRefresh || replacedMeanwhile)) return new Secret(tokens.accessToken);

    const machineFlags = credential.clientCredentials === undefined ? '' : ` --client-credentials --client-id ${credential.client.client_id}`;
    const loginAgain = `run \`subako mcp login --url ${credential.serverUrl} --name ${name}${machineFlags}\` again`;
    const machine = tokens.refreshToken === undefined ? clientCredentialsClientOf(credential) : undefined;
    if (tokens.refreshToken === undefined && machine === undefined) {
      throw options.forceRefresh
        ? new McpAuthError('rejected', `the server refused the OAuth credential "${name}" and it cannot be refreshed: ${loginAgain}`, { credential: name })
        : new McpAuthError('expired', `the OAuth credential "${name}" expired and has no refresh token: ${loginAgain}`, { credential: name });
    }

    let refreshed;
    try {
      refreshed =
        machine !== undefined
          ? await clientCredentialsGrant({
              server: credential.authorizationServer,
              client: machine,
              scope: credential.scope,
              resource: credential.resource,
              fetch: options.fetch,
            })
          : await refreshTokens({
              server: credential.authorizationServer,
              client: credential.client,
              refreshToken: tokens.refreshToken!,
              resource: credential.resource,
              fetch: options.fetch,
            });
    } catch (failure) {
      if (!(failure instanceof TokenRefreshError)) throw failure;
      // A token that has not actually expired yet still works for its last seconds.
      const stillValid = !options.forceRefresh && tokens.expiresAt !== undefined && now() < tokens.expiresAt;
      if (stillValid && failure.reason === 'unavailable') return new Secret(tokens.accessToken);
      throw refreshFailure(failure, name, loginAgain);
    }
    editor.write(name, JSON.stringify({ ...credential, tokens: storedTokens(refreshed, now(), tokens) } satisfies StoredCredential));
    return new Secret(refreshed.access_token);
  });
}

/**
 * A refusal (invalid_grant: the refresh token expired, was revoked or reused) means only a new login
 * helps: McpAuthError. An unreachable or failing authorization server is a transport failure that a
 * retry may get past: McpServerError. Neither message repeats what the server sent beyond its error code.
 */
function refreshFailure(failure: TokenRefreshError, name: string, loginAgain: string): Error {
  const code = failure.oauthCode === undefined ? '' : ` (${failure.oauthCode})`;
  if (failure.reason === 'refused') {
    return new McpAuthError('expired', `the authorization server refused to refresh the OAuth credential "${name}"${code}: ${loginAgain}`, {
      credential: name,
    });
  }
  const what = failure.oauthCode === undefined ? 'could not be reached or sent no usable answer' : `failed${code}`;
  return new McpServerError('transport', `the authorization server ${what} while refreshing the OAuth credential "${name}"; try again`);
}
