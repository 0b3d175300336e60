/**
 * OAuth for MCP servers: `login` makes a named credential out of band; the store keeps it sealed and
 * hands out fresh access tokens (`accessTokenFor`), refreshing them before they expire. `refreshTokens` and
 * `needsRefresh` are the one refresh-token grant and the one rule of when to use it, for every holder of an
 * OAuth credential (the platform's vaults too). `clientCredentialsGrant` is the machine-to-machine grant (extension
 * `io.modelcontextprotocol/oauth-client-credentials`), which `login` runs with `clientCredentials`.
 */
export {
  CredentialStore,
  accessTokenFor,
  defaultCredentialStore,
  forgetCredential,
  listCredentials,
  type CredentialStoreOptions,
} from './store.js';
export { defaultCredentialPath, checkCredentialName } from './credential-file.js';
export {
  PRIVATE_KEY_ALGORITHMS,
  type ClientCredentialsAuthentication,
  type PrivateKeyAlgorithm,
  type StoredCredential,
  type StoredTokens,
} from './credential.js';
export { type ClientCredentialsOptions } from './client-credentials.js';
export {
  CLIENT_CREDENTIALS_EXTENSION,
  clientCredentialsGrant,
  type ClientCredentialsClient,
  type ClientCredentialsGrantRequest,
} from './client-credentials-grant.js';
export { legacyEndpoints } from './legacy-endpoints.js';
export { MAX_TOKEN_ANSWER_BYTES, REFRESH_EARLY_MS, needsRefresh, refreshTokens, type TokenRefreshRequest } from './token-refresh.js';
export { login, type LoginOptions, type LoginResult, type PreRegisteredClient, type ClientSource } from './login.js';
export { openInBrowser, findBrowserOpener } from './browser.js';
export {
  CREDENTIAL_STORE_ERROR,
  CredentialStoreError,
  LOGIN_ERROR,
  LoginError,
  TOKEN_REFRESH_ERROR,
  TokenRefreshError,
  type CredentialStoreErrorReason,
  type LoginErrorReason,
  type TokenRefreshErrorReason,
} from './errors.js';
export { beginWebAuthorization, finishWebAuthorization, issuerMetadata, type WebAuthorizationStart, type WebAuthorizationFinish } from './web-authorization.js';
export { revokeTokens, type RevocationOutcome, type RevocationRequest } from './revocation.js';
export { discover, probe, parseServerUrl, resourceFor } from './discovery.js';
export { register, preRegistered, checkMetadataDocumentUrl } from './client-registration.js';
export type { AuthorizationServerMetadata, OAuthClientInformationFull, FetchLike as OAuthFetch } from '@modelcontextprotocol/client';
