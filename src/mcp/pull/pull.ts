/**
 * The I/O half of `pull`: list the server's tools through the toolbox, generate the bindings, and write
 * the file atomically (a reader never sees half a module; a failed pull leaves the old file alone).
 */
import { randomBytes } from 'node:crypto';
import { rename, unlink, writeFile } from 'node:fs/promises';
import type { Auth } from '../auth.js';
import { tools as listTools } from '../client-api.js';
import type { McpClientPool } from '../connection.js';
import { generateBindings } from './generate.js';

export interface PullOptions {
  url: string;
  auth?: Auth;
  /** Where to write the module. */
  out: string;
  /** The command line for the header (see describePullCommand). */
  command: string;
  pool?: McpClientPool;
}

export interface PullResult {
  /** The tool names, in the order the module has them. */
  tools: string[];
  bytes: number;
}

export async function pullBindings(options: PullOptions): Promise<PullResult> {
  const toolbox = await listTools({ url: options.url, auth: options.auth, pool: options.pool });
  const listed = Object.values(toolbox);
  const text = generateBindings({ url: new URL(options.url).href, tools: listed, command: options.command });
  await writeAtomically(options.out, text);
  return { tools: listed.map((t) => t.name).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), bytes: Buffer.byteLength(text) };
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
