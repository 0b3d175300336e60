/**
 * The file OAuth credentials live in: `$SUBAKO_HOME/credentials.json` (default `~/.subako`), a JSON object of
 * sealed entries, `{ "version": 1, "credentials": { "<name>": "subako-sealed:v1:…" } }`. Each entry is the
 * whole credential (tokens, client registration, endpoints) sealed with AES-256-GCM, bound to its name so
 * an entry copied under another name will not open. Only names are in the clear.
 *
 * Writes are atomic (a private temporary file, fsynced, renamed over the old one, mode 0600 in a 0700
 * directory) and serialised across processes by a lock directory, so two refreshes never interleave.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rmdir, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isSystemError, seal, sealingKey, subakoHome, unseal } from '../../common/index.js';
import { CredentialStoreError } from './errors.js';

const FILE_VERSION = 1;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** A lock older than this was left by a process that died; it is broken. */
const STALE_LOCK_MS = 30_000;
const LOCK_WAIT_MS = 15_000;

export interface CredentialFileOptions {
  /** The file; defaults to `credentials.json` under SUBAKO_HOME. */
  path?: string;
  /** The sealing key; defaults to the one seal.ts finds (SUBAKO_SECRET_KEY or the key file). */
  key?: Buffer;
  env?: NodeJS.ProcessEnv;
}

export function defaultCredentialPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(subakoHome(env), 'credentials.json');
}

export function checkCredentialName(name: string): void {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new CredentialStoreError(
      'invalid_name',
      `"${String(name).slice(0, 80)}" is not a credential name: use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`,
    );
  }
}

/** Sealed text of one entry, by name. */
type SealedEntries = Record<string, string>;

export class CredentialFile {
  readonly path: string;
  private readonly key: Buffer | undefined;
  private readonly env: NodeJS.ProcessEnv;

  constructor(options: CredentialFileOptions = {}) {
    this.env = options.env ?? process.env;
    this.path = options.path ?? defaultCredentialPath(this.env);
    this.key = options.key;
  }

  async names(): Promise<string[]> {
    return Object.keys(await this.readEntries()).sort();
  }

  /** The entry's plain JSON text, or undefined when there is none. */
  async read(name: string): Promise<string | undefined> {
    checkCredentialName(name);
    const sealed = (await this.readEntries())[name];
    if (sealed === undefined) return undefined;
    return unseal(sealed, { key: this.key ?? this.defaultKey(), context: contextOf(name) }).reveal();
  }

  /** Runs `change` on the entries while holding the lock, then writes what it left (if it changed anything). */
  async update<T>(change: (entries: Editor) => Promise<T> | T): Promise<T> {
    return this.withLock(async () => {
      const entries = await this.readEntries();
      let changed = false;
      const editor: Editor = {
        read: (name) => {
          checkCredentialName(name);
          const sealed = entries[name];
          return sealed === undefined ? undefined : unseal(sealed, { key: this.key ?? this.defaultKey(), context: contextOf(name) }).reveal();
        },
        write: (name, plain) => {
          checkCredentialName(name);
          entries[name] = seal(plain, { key: this.key ?? this.defaultKey(), context: contextOf(name) });
          changed = true;
        },
        delete: (name) => {
          checkCredentialName(name);
          if (!(name in entries)) return false;
          delete entries[name];
          changed = true;
          return true;
        },
      };
      const result = await change(editor);
      if (changed) await this.writeEntries(entries);
      return result;
    });
  }

  /** The key is looked up at use, with this store's environment (SUBAKO_SECRET_KEY, SUBAKO_HOME). */
  private defaultKey(): Buffer {
    return sealingKey(this.env);
  }

  private async readEntries(): Promise<SealedEntries> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Object.create(null) as SealedEntries;
      throw err;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new CredentialStoreError('corrupt', `${this.path} is not valid JSON`, { cause: err });
    }
    const credentials = (parsed as { credentials?: unknown } | null)?.credentials;
    if ((parsed as { version?: unknown } | null)?.version !== FILE_VERSION || typeof credentials !== 'object' || credentials === null) {
      throw new CredentialStoreError('corrupt', `${this.path} is not a version ${FILE_VERSION} credentials file`);
    }
    const entries = Object.create(null) as SealedEntries;
    for (const [name, sealed] of Object.entries(credentials)) {
      if (typeof sealed !== 'string' || !NAME.test(name)) {
        throw new CredentialStoreError('corrupt', `${this.path} holds an entry that is not a sealed credential`);
      }
      entries[name] = sealed;
    }
    return entries;
  }

  private async writeEntries(entries: SealedEntries): Promise<void> {
    const sorted: SealedEntries = {};
    for (const name of Object.keys(entries).sort()) sorted[name] = entries[name]!;
    const text = `${JSON.stringify({ version: FILE_VERSION, credentials: sorted }, null, 2)}\n`;
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.chmod(0o600); // whatever the umask did
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temporary, this.path);
    } catch (err) {
      await unlink(temporary).catch(() => undefined); // best effort: the rename's own error is what the caller gets
      throw err;
    }
  }

  /** A lock directory next to the file: mkdir is atomic, and a crashed holder's lock goes stale. */
  private async withLock<T>(run: () => Promise<T>): Promise<T> {
    const lock = `${this.path}.lock`;
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        await mkdir(lock, { mode: 0o700 });
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const held = await stat(lock).catch((error: unknown) => {
        if (isSystemError(error, 'ENOENT')) return undefined; // let go since mkdir failed: try again
        throw error;
      });
      if (held !== undefined && Date.now() - held.mtimeMs > STALE_LOCK_MS) {
        await rmdir(lock).catch((error: unknown) => {
          // Another process cleared or took the stale lock first: the next mkdir decides.
          if (!isSystemError(error, 'ENOENT', 'ENOTEMPTY')) throw error;
        });
        continue;
      }
      if (Date.now() > deadline) {
        throw new CredentialStoreError('locked', `the credential store is locked (${lock}); if no subako is running, remove it`);
      }
      await sleep(25 + Math.floor(Math.random() * 50));
    }
    try {
      return await run();
    } finally {
      // A lock that cannot be removed goes stale and the next holder clears it; run()'s outcome stands.
      await rmdir(lock).catch(() => undefined);
    }
  }
}

/** What `update` hands its callback: plain JSON text in, sealed on write. */
export interface Editor {
  read(name: string): string | undefined;
  write(name: string, plain: string): void;
  delete(name: string): boolean;
}

function contextOf(name: string): string {
  return `subako.oauth-credential:${name}`;
}
