/**
 * The I/O half of `pull`: list the server's tools through the toolbox, generate the bindings, and write
 * the file atomically (a reader never sees half a module; a failed pull leaves the old file alone).
 */
import { randomBytes } from 'node:crypto';
import { rename, unlink, writeFile } from 'node:fs/promises';
import type { Auth } from '../auth.js';
import { tools as listTools } from '../client-api.js';
import type { McpClientPool } from '../connection.js';
import { describePullCommand, type PullCommand } from './command-line.js';
import { generateBindings } from './generate.js';
import { checkUrlVariable, classifyServerUrl, urlVariableFor } from './url-secrecy.js';

export interface PullOptions {
  url: string;
  auth?: Auth;
  /** Where to write the module. */
  out: string;
  /**
   * The command line for the header, or a function of the variable the URL went to (when it stays out of
   * the file) giving it. A secret URL in a plain string is replaced by the variable.
   */
  command: string | ((urlVariable: string | undefined) => string);
  /** The environment variable for the URL; giving it keeps the URL out of the file even when it looks public. */
  urlVariable?: string;
  pool?: McpClientPool;
}

export interface PullResult {
  /** The tool names, in the order the module has them. */
  tools: string[];
  bytes: number;
  /** Set when the URL was kept out of the file: the variable `connect` reads it from. */
  urlVariable?: string;
  /** Why the URL was kept out (names parts, never values). */
  reasons: readonly string[];
}

export async function pullBindings(options: PullOptions): Promise<PullResult> {
  const forced = options.urlVariable !== undefined;
  const variable = forced ? checkUrlVariable(options.urlVariable!) : urlVariableFor(options.out);
  const secrecy = classifyServerUrl(options.url);
  const keepOut = forced || secrecy.secret;
  const toolbox = await listTools({ url: options.url, auth: options.auth, pool: options.pool });
  const listed = Object.values(toolbox);
  const text = generateBindings({
    url: new URL(options.url).href,
    tools: listed,
    command: typeof options.command === 'string' ? options.command : options.command(keepOut ? variable : undefined),
    authenticated: isAuthenticated(options.auth),
    urlVariable: variable,
    keepUrlOut: keepOut,
  });
  await writeAtomically(options.out, text);
  return {
    tools: listed.map((t) => t.name).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
    bytes: Buffer.byteLength(text),
    ...(keepOut ? { urlVariable: variable } : {}),
    reasons: forced ? ['--url-env was given', ...secrecy.reasons] : secrecy.reasons,
  };
}

/** An auth that sends something: an OAuth credential or at least one header. */
function isAuthenticated(auth: Auth | undefined): boolean {
  if (auth === undefined) return false;
  return auth.kind === 'oauth' || Object.keys(auth.values).length > 0;
}

/** The usual header command for a pull from the CLI's flags. */
export function pullCommandFor(command: Omit<PullCommand, 'urlVariable'>): (urlVariable: string | undefined) => string {
  return (urlVariable) => describePullCommand({ ...command, ...(urlVariable === undefined ? {} : { urlVariable }) });
}

async function writeAtomically(path: string, text: string): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, text, { encoding: 'utf8', flag: 'wx' });
  try {
    await rename(temporary, path);
  } catch (err) {
    await unlink(temporary).catch(() => undefined); // best effort: the rename's own error is what the caller gets
    throw err;
  }
}
