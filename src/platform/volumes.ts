/**
 * Where volumes live on the host: `<data>/volumes/sessions/<session>/tmp` behind a session's /volume/tmp,
 * and `<data>/volumes/agents/<agent>/data` behind /volume/data, shared by the agent's sessions. Ids come
 * from ids.ts (letters, digits, "_"), checked again here so no id can name a path outside.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

const SAFE_ID = /^[a-z]{2,5}_[0-9a-f]{28}$/;

export class Volumes {
  constructor(readonly root: string) {}

  sessionDir(sessionId: string): string {
    return join(this.root, 'sessions', safe(sessionId));
  }

  agentDir(agentId: string): string {
    return join(this.root, 'agents', safe(agentId));
  }

  /** The session's /volume/tmp, created when missing. */
  async sessionTmp(sessionId: string): Promise<string> {
    const dir = join(this.sessionDir(sessionId), 'tmp');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** The agent's /volume/data, created when missing. */
  async agentData(agentId: string): Promise<string> {
    const dir = join(this.agentDir(agentId), 'data');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return dir;
  }
}

function safe(id: string): string {
  if (!SAFE_ID.test(id)) throw new Error(`not a volume owner id: ${JSON.stringify(id)}`);
  return id;
}
