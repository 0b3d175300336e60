/**
 * A read-only look into a session's /volume/tmp for people (the console's file browser): list a directory,
 * read a file. Every access walks the guest path with the WASI room's confined resolver (listDirectoryUnder,
 * readFileUnder) with links refused, so what a guest put there — a symlink to /etc, a directory swapped for
 * a link mid-way — shows nothing outside the volume. Nothing here writes.
 */
import { HostPathError, listDirectoryUnder, readFileUnder, type DirectoryEntry } from '../wasi/index.js';
import { ValidationError } from '../errors.js';
import { NotFoundError } from './errors.js';
import type { SessionService } from './sessions.js';
import type { Volumes } from './volumes/index.js';

/** Entries shown of one directory. */
export const MAX_LISTED_ENTRIES = 1_000;
/** Bytes read of one file. */
export const MAX_READ_BYTES = 8 * 1024 * 1024;

export interface VolumeListing {
  /** The directory, as a path under /volume/tmp ('' for its root). */
  path: string;
  entries: DirectoryEntry[];
  truncated: boolean;
}

export class VolumeBrowser {
  constructor(private readonly sessions: SessionService, private readonly volumes: Volumes) {}

  async list(sessionId: string, path: string): Promise<VolumeListing> {
    const root = await this.tmpOf(sessionId);
    const relative = normalise(path);
    try {
      return { path: relative, ...(await listDirectoryUnder({ root, path: relative, links: 'refuse' }, MAX_LISTED_ENTRIES)) };
    } catch (error) {
      throw refusal(error, relative);
    }
  }

  async read(sessionId: string, path: string): Promise<Buffer> {
    const root = await this.tmpOf(sessionId);
    const relative = normalise(path);
    try {
      return await readFileUnder({ root, path: relative, links: 'refuse' }, MAX_READ_BYTES);
    } catch (error) {
      throw refusal(error, relative);
    }
  }

  private async tmpOf(sessionId: string): Promise<string> {
    await this.sessions.get(sessionId);
    return this.volumes.sessionTmp(sessionId);
  }
}

/** A path as people write it (`/a/b`, `a/b/`, `/volume/tmp/a`) as a path relative to the volume. */
function normalise(path: string): string {
  const trimmed = path.replace(/^\/volume\/tmp(?=\/|$)/, '');
  return trimmed.split('/').filter((part) => part !== '' && part !== '.').join('/');
}

function refusal(error: unknown, path: string): unknown {
  if (!(error instanceof HostPathError)) return error;
  const shown = `/volume/tmp/${path}`;
  if (error.reason === 'missing' || error.reason === 'missing_directory') return new NotFoundError(shown);
  return new ValidationError([{ code: `volume.${error.reason}`, message: `${shown} cannot be shown: ${error.message.replace(/^"[^"]*" /, '')}` }]);
}
