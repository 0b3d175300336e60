/**
 * `login` for a machine: the client-credentials grant (client-credentials-grant.ts) instead of a person's
 * sign-in, against the authorization server discovery found, its result stored as a named credential like any
 * other. What is checked before anything is sent: a client id, exactly one of a secret or a private key, a key
 * that parses and fits its algorithm, and an authorization server that offers the grant and the authentication.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import type { AuthorizationServerMetadata, FetchLike, OAuthClientInformationFull } from '@modelcontextprotocol/client';
import { Secret } from '../../common/index.js';
import { LoginError, TokenRefreshError } from './errors.js';
import { clientCredentialsGrant, type ClientCredentialsClient } from './client-credentials-grant.js';
import { PRIVATE_KEY_ALGORITHMS, storedTokens, type PrivateKeyAlgorithm, type StoredCredential } from './credential.js';

/** A machine's own client at the authorization server: its id and a secret, or its id and a private key. */
export interface ClientCredentialsOptions {
  clientId: string;
  /** Sent by `client_secret_basic` or `client_secret_post`, as the authorization server advertises; stored sealed. */
  clientSecret?: string | Secret;
  /** A PEM private key (PKCS#8, or SEC1/PKCS#1 converted) signing `private_key_jwt` assertions; stored sealed. */
  privateKey?: { pem: string; algorithm?: PrivateKeyAlgorithm };
}

/** Checks the options and turns them into the grant's client; LoginError `registration` naming what is wrong. */
export function checkClientCredentials(options: ClientCredentialsOptions): ClientCredentialsClient {
  const clientId = options.clientId;
  if (typeof clientId !== 'string' || clientId.trim() === '' || /[\r\n\0]/.test(clientId)) {
    throw new LoginError('registration', 'the client-credentials grant needs a client id: the non-empty id the authorization server gave this machine');
  }
  const hasSecret = options.clientSecret !== undefined;
  const hasKey = options.privateKey !== undefined;
  if (hasSecret === hasKey) {
    throw new LoginError('registration', 'the client-credentials grant needs exactly one of a client secret or a private key (private_key_jwt)');
  }
  if (hasSecret) {
    const secret = Secret.from(options.clientSecret!);
    if (secret.reveal() === '') throw new LoginError('registration', 'the client secret is empty: give the one the authorization server issued');
    return { clientId, clientSecret: secret };
  }
  const algorithm = options.privateKey!.algorithm ?? 'ES256';
  if (!(PRIVATE_KEY_ALGORITHMS as readonly string[]).includes(algorithm)) {
    throw new LoginError('registration', `"${String(algorithm).slice(0, 20)}" is not a signing algorithm subako uses: give one of ${PRIVATE_KEY_ALGORITHMS.join(', ')}`);
  }
  return { clientId, privateKey: { pem: pkcs8(options.privateKey!.pem, algorithm), algorithm } };
}

/** The key as PKCS#8 PEM (what the signer imports), refusing one that does not fit the algorithm. */
function pkcs8(pem: string, algorithm: PrivateKeyAlgorithm): string {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (err) {
    // Never the key's text or the parser's message (which may quote it).
    throw new LoginError('registration', 'the private key is not a PEM private key (PKCS#8 "BEGIN PRIVATE KEY", or an EC/RSA one)', { cause: err });
  }
  const fits = algorithm === 'ES256' ? key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' : key.asymmetricKeyType === 'rsa';
  if (!fits) {
    const wanted = algorithm === 'ES256' ? 'an EC P-256 key' : 'an RSA key';
    throw new LoginError('registration', `${algorithm} signs with ${wanted}, and this private key is ${describeKey(key)}: give the matching key or algorithm`);
  }
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

function describeKey(key: KeyObject): string {
  const curve = key.asymmetricKeyDetails?.namedCurve;
  return `${key.asymmetricKeyType ?? 'of an unknown type'}${curve !== undefined ? ` (${curve})` : ''}`;
}

export interface ClientCredentialsLogin {
  serverUrl: URL;
  resource: string;
  authorizationServerUrl: string;
  metadata: AuthorizationServerMetadata;
  scope: string | undefined;
  client: ClientCredentialsClient;
  fetchFn: FetchLike;
  now: number;
}

/** Runs the grant and makes the credential to store (the caller stores it). */
export async function credentialByClientCredentials(login: ClientCredentialsLogin): Promise<StoredCredential> {
  const { metadata, client } = login;
  checkServerOffers(login.authorizationServerUrl, metadata, client);
  let tokens;
  try {
    tokens = await clientCredentialsGrant({
      server: { url: login.authorizationServerUrl, metadata },
      client,
      scope: login.scope,
      resource: login.resource,
      fetch: login.fetchFn,
    });
  } catch (err) {
    if (!(err instanceof TokenRefreshError)) throw err;
    const code = err.oauthCode === undefined ? '' : ` (${err.oauthCode})`;
    const hint = err.reason === 'refused' ? ': check the client id and its secret or key, and that the client may use this grant' : '; try again';
    const what = err.reason === 'refused' ? 'refused the client credentials' : 'could not be reached or failed';
    throw new LoginError('token', `the authorization server ${login.authorizationServerUrl} ${what}${code}${hint}`);
  }
  const stored: OAuthClientInformationFull = {
    client_id: client.clientId,
    redirect_uris: [],
    grant_types: ['client_credentials'],
    ...('clientSecret' in client ? { client_secret: client.clientSecret.reveal() } : { token_endpoint_auth_method: 'private_key_jwt' }),
  };
  return {
    version: 1,
    serverUrl: login.serverUrl.href,
    resource: login.resource,
    authorizationServer: { url: login.authorizationServerUrl, metadata },
    client: stored,
    ...(login.scope !== undefined ? { scope: login.scope } : {}),
    tokens: storedTokens(tokens, login.now),
    clientCredentials:
      'clientSecret' in client
        ? { method: 'client_secret' }
        : { method: 'private_key_jwt', privateKeyPem: client.privateKey.pem, algorithm: client.privateKey.algorithm },
  };
}

/** Where the server lists what it offers, a grant or an authentication it does not list is refused before sending. */
function checkServerOffers(url: string, metadata: AuthorizationServerMetadata, client: ClientCredentialsClient): void {
  const grants = metadata.grant_types_supported;
  if (grants !== undefined && !grants.includes('client_credentials')) {
    throw new LoginError(
      'token',
      `the authorization server ${url} does not offer the client-credentials grant (it offers ${grants.join(', ') || 'none'}): sign in as a person instead (leave out --client-credentials)`,
    );
  }
  const methods = metadata.token_endpoint_auth_methods_supported;
  if (methods === undefined) return;
  const usable = 'clientSecret' in client ? ['client_secret_basic', 'client_secret_post'] : ['private_key_jwt'];
  if (!usable.some((m) => methods.includes(m))) {
    const given = 'clientSecret' in client ? 'a client secret' : 'a private key';
    throw new LoginError('token', `the authorization server ${url} does not take ${given} (it takes ${methods.join(', ') || 'none'})`);
  }
}
