/**
 * Opening the authorization URL in the person's browser, where there is one. Best effort only: the URL is
 * always printed too, and a machine without a browser (a server, a container, CI) must not make login fail.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { isSystemError } from '../../common/index.js';

/** The opener command for this platform, if it is on PATH. */
export function findBrowserOpener(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string | undefined {
  const command = platform === 'darwin' ? 'open' : platform === 'win32' ? undefined : 'xdg-open';
  if (command === undefined) return undefined;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch (error) {
      if (!isSystemError(error)) throw error; // expected: missing or not executable
      // not here
    }
  }
  return undefined;
}

/** Tries to open `url`; returns whether an opener was started. Throws only on a bug of ours. */
export function openInBrowser(url: string): boolean {
  try {
    const opener = findBrowserOpener();
    if (opener === undefined) return false;
    // The URL is one argv entry, never a shell string.
    const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
    // A start that fails later (ENOENT, EACCES) loses nothing: the URL was printed for the person to open.
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch (error) {
    // expected: Node refusing the argument (ERR_INVALID_ARG_VALUE for a NUL in the URL) or the spawn (EAGAIN, …)
    if (typeof (error as NodeJS.ErrnoException | null)?.code !== 'string') throw error;
    return false;
  }
}
