/**
 * The data home: the directory subako keeps its own state in (the sealing key, OAuth credentials, the
 * server's data directory). `$SUBAKO_HOME` when set and not empty, else `~/.subako`.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

export function subakoHome(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  return env.SUBAKO_HOME && env.SUBAKO_HOME.length > 0 ? env.SUBAKO_HOME : join(home, '.subako');
}
