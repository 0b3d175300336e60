/**
 * Where volumes live on the host: `<data>/volumes/sessions/<session>/tmp` behind a session's /volume/tmp,
 * and `<data>/volumes/agents/<agent>/data` behind /volume/data, shared by the agent's sessions. Ids come
 * from ids.ts (letters, digits, "_"), checked again here so no id can name a path outside.
 *
 * Removing a volume cannot be turned against the host: it is first moved out of every guest's path in one
 * rename, into `<data>/volumes/.trash/<id>-<random>` (a guest's preopen is the `tmp` or `data` directory
 * inside, so no guest can reach the entry that moves), then removed by wasi's descriptor-anchored walk,
 * which never follows a link a guest may still swap in. What a crash or a still-running guest leaves in the
 * trash is removed at start-up.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { isSystemError } from '../../common/index.js';
import { removeTree } from '../../wasi/index.js';

const SAFE_ID = /^[a-z]{2,5}_[0-9a-f]{28}$/;
/** A trash entry: the id of what was removed, and a random suffix (one id may be trashed twice). */
const TRASH_ENTRY = /^[a-z]{2,5}_[0-9a-f]{28}-[0-9a-f]{16}$/;

export class Volumes {
  private readonly trash: string;
  /** Trash entries being removed right now, which a sweep leaves to the removal that owns them. */
  private readonly removing = new Set<string>();
  /** Volume directories known to exist (see `made`). */
  private readonly ensured = new Set<string>();

  constructor(readonly root: string) {
    this.trash = join(root, '.trash');
  }

  sessionDir(sessionId: string): string {
    return join(this.root, 'sessions', safe(sessionId));
  }

  agentDir(agentId: string): string {
    return join(this.root, 'agents', safe(agentId));
  }

  /** The session's /volume/tmp, created when missing. */
  sessionTmp(sessionId: string): Promise<string> {
    return this.made(join(this.sessionDir(sessionId), 'tmp'));
  }

  /** The agent's /volume/data, created when missing. */
  agentData(agentId: string): Promise<string> {
    return this.made(join(this.agentDir(agentId), 'data'));
  }

  /**
   * A volume directory, made once: every call needs its session's, and a `mkdir -p` per call was a
   * file-system round trip on the hot path. Forgotten when the volume is moved to the trash, so a call
   * after a deletion makes it afresh rather than trusting a path that is gone.
   */
  private async made(dir: string): Promise<string> {
    if (this.ensured.has(dir)) return dir;
    await mkdir(dir, { recursive: true, mode: 0o700 });
    this.ensured.add(dir);
    return dir;
  }

  /**
   * Removes the volumes of these sessions and, when given, the agent's own: all are moved into the trash
   * first (one rename each), then removed. Answers whether nothing of them is left.
   */
  async remove(sessionIds: readonly string[], agentId?: string): Promise<boolean> {
    const dirs = sessionIds.map((id) => ({ id, dir: this.sessionDir(id) }));
    if (agentId !== undefined) dirs.push({ id: agentId, dir: this.agentDir(agentId) });
    const moved: string[] = [];
    for (const { id, dir } of dirs) {
      const entry = await this.moveToTrash(id, dir);
      if (entry !== null) moved.push(entry);
    }
    let complete = true;
    for (const entry of moved) complete = (await this.removeFromTrash(entry)) && complete;
    return complete;
  }

  /**
   * Moves to the trash the volume directories no record refers to (left by a crash between deleting a
   * record and moving its volume), then empties the trash. Only names this class makes are touched.
   */
  async sweep(known: { session(id: string): Promise<boolean>; agent(id: string): Promise<boolean> }): Promise<void> {
    for (const [kind, isKnown] of [['sessions', known.session], ['agents', known.agent]] as const) {
      for (const name of await namesIn(join(this.root, kind))) {
        if (SAFE_ID.test(name) && !(await isKnown(name))) await this.moveToTrash(name, join(this.root, kind, name));
      }
    }
    await this.emptyTrash();
  }

  /** Removes what the trash holds, but for entries a removal in progress owns. */
  async emptyTrash(): Promise<boolean> {
    let complete = true;
    for (const name of await namesIn(this.trash)) {
      if (TRASH_ENTRY.test(name) && !this.removing.has(name)) complete = (await this.removeFromTrash(name)) && complete;
    }
    return complete;
  }

  /** One rename out of every guest's path; null when there was nothing to move. */
  private async moveToTrash(id: string, dir: string): Promise<string | null> {
    await mkdir(this.trash, { recursive: true, mode: 0o700 });
    const entry = `${safe(id)}-${randomBytes(8).toString('hex')}`;
    for (const made of this.ensured) if (made.startsWith(`${dir}/`)) this.ensured.delete(made);
    try {
      await rename(dir, join(this.trash, entry));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    return entry;
  }

  private async removeFromTrash(entry: string): Promise<boolean> {
    this.removing.add(entry);
    try {
      return (await removeTree(this.trash, entry)).complete;
    } catch (error) {
      // expected: the host refusing a step (EACCES, EBUSY, …); out of every guest's reach already, the next
      // sweep tries again. Anything else is a bug: the caller (a delete, the sweeper's chore) reports it.
      if (!isSystemError(error)) throw error;
      return false;
    } finally {
      this.removing.delete(entry);
    }
  }
}

async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

function safe(id: string): string {
  if (!SAFE_ID.test(id)) throw new Error(`not a volume owner id: ${JSON.stringify(id)}`);
  return id;
}
