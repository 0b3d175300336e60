/** Runs the real `subako` command in a child process (asynchronously: the test's own servers keep running). */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../helpers/paths.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(REPO_ROOT, 'bin', 'subako.js'), ...args],
      // A hang guard, not a margin: several CLI processes start at once on a machine others load too.
      { env: { ...process.env, ...env }, timeout: 150_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
