/**
 * Sealing: AES-256-GCM for secrets at rest (stored credentials, sealed header values).
 *
 * The key comes from `SUBAKO_SECRET_KEY` (base64 of 32 bytes) or else from a key file,
 * `$SUBAKO_HOME/secret.key` (default `~/.subako/secret.key`), created on first use with mode 0600 in a
 * directory of mode 0700. A sealed value is one line of text, `subako-sealed:v1:<iv>.<tag>.<ciphertext>`
 * (base64url), so it can sit in JSON or a database column. An optional `context` (e.g. a credential's name)
 * is bound as additional authenticated data: a sealed value moved to another name will not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { subakoHome } from './data-home.js';
import { SealError } from './errors.js';
import { Secret } from './secret.js';

const PREFIX = 'subako-sealed:v1:';
const KEY_BYTES = 32;
const IV_BYTES = 12;

export interface SealOptions {
  /** The 32-byte key; defaults to `sealingKey()`. */
  key?: Buffer;
  /** Bound as additional authenticated data: unsealing must name the same context. */
  context?: string;
}

export function keyFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(subakoHome(env), 'secret.key');
}

function decodeKey(text: string, where: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== KEY_BYTES) {
    throw new SealError('bad_key', `${where} must hold the base64 encoding of exactly ${KEY_BYTES} bytes`);
  }
  return key;
}

const fileKeys = new Map<string, Buffer>();

/**
 * The sealing key: `SUBAKO_SECRET_KEY` when set, else the key file (created when absent). A key file that
 * other users can read is refused rather than used.
 */
export function sealingKey(env: NodeJS.ProcessEnv = process.env): Buffer {
  if (env.SUBAKO_SECRET_KEY) return decodeKey(env.SUBAKO_SECRET_KEY, 'SUBAKO_SECRET_KEY');
  const path = keyFilePath(env);
  const cached = fileKeys.get(path);
  if (cached) return cached;
  const key = readOrCreateKeyFile(path, subakoHome(env));
  fileKeys.set(path, key);
  return key;
}

function readOrCreateKeyFile(path: string, home: string): Buffer {
  try {
    return readKeyFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(home, { recursive: true, mode: 0o700 });
  // Write a private temporary file and link it into place: the link is atomic and fails if another
  // process won the race, so a reader never sees a half-written key.
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temporary, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(temporary, 0o600); // the umask cannot widen 0600, but be explicit
  try {
    linkSync(temporary, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(temporary);
  }
  return readKeyFile(path);
}

function readKeyFile(path: string): Buffer {
  const mode = statSync(path).mode;
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new SealError(
      'key_permissions',
      `the key file ${path} is readable by other users (mode ${(mode & 0o777).toString(8)}); run chmod 600 on it`,
    );
  }
  return decodeKey(readFileSync(path, 'utf8'), `the key file ${path}`);
}

/** Encrypts a value (a string or a Secret) into one line of text. */
export function seal(value: string | Secret, options: SealOptions = {}): string {
  const key = options.key ?? sealingKey();
  if (key.length !== KEY_BYTES) throw new SealError('bad_key', `a sealing key has ${KEY_BYTES} bytes`);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (options.context !== undefined) cipher.setAAD(Buffer.from(options.context, 'utf8'));
  const plain = Buffer.from(value instanceof Secret ? value.reveal() : value, 'utf8');
  const data = Buffer.concat([cipher.update(plain), cipher.final()]);
  plain.fill(0);
  const tag = cipher.getAuthTag();
  return `${PREFIX}${iv.toString('base64url')}.${tag.toString('base64url')}.${data.toString('base64url')}`;
}

export function isSealed(text: unknown): text is string {
  return typeof text === 'string' && text.startsWith(PREFIX);
}

/** Opens a sealed value; the plain text comes back as a Secret so it stays redacted until revealed. */
export function unseal(sealed: string, options: SealOptions = {}): Secret {
  if (!isSealed(sealed)) throw new SealError('format', 'not a sealed value (expected the subako-sealed:v1: prefix)');
  const parts = sealed.slice(PREFIX.length).split('.');
  if (parts.length !== 3) throw new SealError('format', 'a sealed value has three dot-separated parts');
  const [iv, tag, data] = parts.map((part) => Buffer.from(part, 'base64url'));
  if (iv.length !== IV_BYTES || tag.length !== 16) throw new SealError('format', 'a sealed value has a malformed header');
  const key = options.key ?? sealingKey();
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    if (options.context !== undefined) decipher.setAAD(Buffer.from(options.context, 'utf8'));
    decipher.setAuthTag(tag);
    const plain = Buffer.concat([decipher.update(data), decipher.final()]);
    const text = plain.toString('utf8');
    plain.fill(0);
    return new Secret(text);
  } catch (err) {
    throw new SealError('tampered', 'the sealed value does not open with this key (wrong key, wrong context, or altered)', {
      cause: err,
    });
  }
}
