/**
 * Why `subako serve` could not start, in one line for the operator: which setting is at fault and how to
 * change it (its flag, its variable, its key in subako.config.json). Pure: it reads the error and the
 * settings, and prints nothing; serve.ts prints the line (and the stack only with --debug).
 */
import { systemErrorCode } from '../common/index.js';
import { SubakoError, ValidationError } from '../errors.js';
import { howToSet } from '../config.js';
import { StoreUnavailableError } from '../platform/index.js';

export interface StartupSettings {
  host: string;
  port: number;
  dataDir: string;
}

/** How each setting named here can be changed: its flag, its variable, its key (from settings.ts). */
const HOW = {
  port: howToSet('serve', 'port'),
  host: howToSet('serve', 'host'),
  dataDir: howToSet('serve', 'dataDir'),
  database: howToSet('serve', 'database'),
} as const;

export function startupErrorLine(err: unknown, settings: StartupSettings): string {
  if (err instanceof ValidationError) return `a setting is not valid: ${err.problems.map((p) => p.message).join('; ')}`;
  const code = systemErrorCode(err);
  const errno = err as NodeJS.ErrnoException;
  if (code === 'EADDRINUSE') {
    return `port ${settings.port} on ${settings.host} is already in use by another program; choose another with ${HOW.port}, or stop what holds it`;
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || errno.syscall === 'getaddrinfo') {
    return `the address ${settings.host} is not one this machine has; set ${HOW.host} to one of its addresses (127.0.0.1 for this machine only)`;
  }
  if (errno.syscall === 'listen' && (code === 'EACCES' || code === 'EPERM')) {
    return `this user may not listen on ${settings.host}:${settings.port} (${code}: ports below 1024 need privileges); choose a port from 1024 up with ${HOW.port}`;
  }
  const sqlite = typeof errno.code === 'string' && errno.code.startsWith('SQLITE_');
  const inDataDir = typeof errno.path === 'string' && (errno.path === settings.dataDir || errno.path.startsWith(`${settings.dataDir.replace(/\/+$/, '')}/`));
  if (sqlite || (code !== undefined && inDataDir)) {
    const what = sqlite ? `its database cannot be opened (${errno.code}: ${errno.message})` : `${code} on ${errno.path}`;
    return `the data directory ${settings.dataDir} cannot be used (${what}); point ${HOW.dataDir} at a directory this user can read and write`;
  }
  if (err instanceof StoreUnavailableError) {
    // Its URL is not repeated: it may hold a password.
    const cause = (err.cause as { code?: unknown } | undefined)?.code;
    return `the database cannot be reached${typeof cause === 'string' ? ` (${cause})` : ''}; start it, or correct ${HOW.database}`;
  }
  if (err instanceof SubakoError) return err.message;
  return `it failed: ${err instanceof Error ? err.message : String(err)} (run again with --debug for the stack)`;
}
