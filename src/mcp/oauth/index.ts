/**
 * OAuth for MCP servers: `login` makes a named credential out of band; the store keeps it sealed and
 * hands out fresh access tokens (`accessTokenFor`), refreshing them before they expire.
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
export { REFRESH_EARLY_MS, type StoredCredential, type StoredTokens } from './credential.js';
export { login, type LoginOptions, type LoginResult, type PreRegisteredClient, type ClientSource } from './login.js';
export { openInBrowser, findBrowserOpener } from './browser.js';
export {
  CREDENTIAL_STORE_ERROR,
  CredentialStoreError,
  LOGIN_ERROR,
  LoginError,
  type CredentialStoreErrorReason,
  type LoginErrorReason,
} from './errors.js';
