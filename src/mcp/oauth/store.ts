/**
 * The OAuth credential store: named credentials made by `subako mcp login`, sealed in one file under
 * SUBAKO_HOME (see credential-file.ts). Programs name a credential (`mcp.oauth("github")`) and get access
 * tokens from `accessTokenFor(name)`, which refreshes them shortly before they expire.
 */
import type { FetchLike } from '@modelcontextprotocol/client';
import type { Secret } from '../../common/index.js';
import { CredentialFile, type CredentialFileOptions } from './credential-file.js';
import { parseCredential, type StoredCredential } from './credential.js';
import { freshAccessToken, type AccessTokenOptions } from './refresh.js';

export interface CredentialStoreOptions extends CredentialFileOptions {
  /** The fetch used for refreshes. */
  fetch?: FetchLike;
  /** The clock (ms since the epoch), for deciding when to refresh. */
  now?: () => number;
  refreshEarlyMs?: number;
}

export class CredentialStore {
  private readonly file: CredentialFile;

  constructor(private readonly options: CredentialStoreOptions = {}) {
    this.file = new CredentialFile(options);
  }

  /** The file the credentials are sealed in. */
  get path(): string {
    return this.file.path;
  }

  /** The stored credentials' names, sorted. */
  async names(): Promise<string[]> {
    return this.file.names();
  }

  async get(name: string): Promise<StoredCredential | undefined> {
    const text = await this.file.read(name);
    return text === undefined ? undefined : parseCredential(text, name);
  }

  /** Stores (or replaces) a credential under `name`. */
  async save(name: string, credential: StoredCredential): Promise<void> {
    await this.file.update((editor) => editor.write(name, JSON.stringify(credential)));
  }

  /** Deletes a credential; false when there was none of that name. */
  async forget(name: string): Promise<boolean> {
    return this.file.update((editor) => editor.delete(name));
  }

  /**
   * A fresh access token for `name`: refreshed (and the rotated refresh token stored) when it expires
   * within a minute. Throws McpAuthError when there is no such credential or it cannot be refreshed.
   */
  async accessToken(name: string, options: Pick<AccessTokenOptions, 'forceRefresh'> = {}): Promise<Secret> {
    return freshAccessToken(this.file, name, {
      fetch: this.options.fetch,
      now: this.options.now,
      refreshEarlyMs: this.options.refreshEarlyMs,
      forceRefresh: options.forceRefresh,
    });
  }
}

/** The store at the default place, read from the environment as it is now (SUBAKO_HOME may change in tests). */
export function defaultCredentialStore(): CredentialStore {
  return new CredentialStore();
}

/** A fresh access token for the named credential in the default store; McpAuthError if missing or unrefreshable. */
export function accessTokenFor(name: string, options: Pick<AccessTokenOptions, 'forceRefresh'> = {}): Promise<Secret> {
  return defaultCredentialStore().accessToken(name, options);
}

export function listCredentials(): Promise<string[]> {
  return defaultCredentialStore().names();
}

export function forgetCredential(name: string): Promise<boolean> {
  return defaultCredentialStore().forget(name);
}
