/** Runs the real `subako` command (bin/subako.js) as a child process, with its own data home. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../helpers/paths.js';

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function startCli(args: string[], env: NodeJS.ProcessEnv, input?: string): { child: ChildProcess; done: Promise<CliRun> } {
  // The parent's own key or server must not leak into the command under test.
  const base = { ...process.env };
  for (const name of ['SUBAKO_API_KEY', 'SUBAKO_SERVER', 'SUBAKO_PROFILE']) delete base[name];
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), ...args], {
    env: { ...base, ...env }, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (input !== undefined) child.stdin!.end(input);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => { stdout += chunk; });
  child.stderr!.on('data', (chunk) => { stderr += chunk; });
  const done = new Promise<CliRun>((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
  return { child, done };
}

export function runCli(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<CliRun> {
  return startCli(args, env, input).done;
}

/** The command's stdout as JSON, after checking that it succeeded. */
export function jsonOf(run: CliRun): any {
  if (run.status !== 0) throw new Error(`exit ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}
