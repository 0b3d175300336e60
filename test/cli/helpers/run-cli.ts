/** Runs the real `subako` command (bin/subako.js) as a child process, with its own data home. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../helpers/paths.js';
import { spawnServe, tempDir, type ChildServer } from '../../server/helpers/harness.js';

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `input`: what stdin gets (then closed); `command` runs another program instead (a terminal around subako,
 * script(1)), with stdin left open for the caller and `extraEnv` added.
 */
export function startCli(
  args: string[], env: NodeJS.ProcessEnv, input?: string, command?: string[], extraEnv: NodeJS.ProcessEnv = {},
): { child: ChildProcess; done: Promise<CliRun>; output: () => string } {
  // The parent's own key or server must not leak into the command under test.
  const base = { ...process.env };
  for (const name of ['SUBAKO_API_KEY', 'SUBAKO_SERVER', 'SUBAKO_PROFILE']) delete base[name];
  const argv = command ?? [process.execPath, join(REPO_ROOT, 'bin', 'subako.js'), ...args];
  const child = spawn(argv[0], argv.slice(1), {
    env: { ...base, ...env, ...extraEnv }, stdio: [input === undefined && command === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (input !== undefined) child.stdin!.end(input);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => { stdout += chunk; });
  child.stderr!.on('data', (chunk) => { stderr += chunk; });
  const done = new Promise<CliRun>((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
  return { child, done, output: () => stdout };
}

export function runCli(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<CliRun> {
  return startCli(args, env, input).done;
}

/** The command's stdout as JSON, after checking that it succeeded. */
export function jsonOf(run: CliRun): any {
  if (run.status !== 0) throw new Error(`exit ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/**
 * A real `subako serve` on a data directory of its own, and the environment of someone holding its admin key.
 * `serveArgs`: more of `subako serve`'s flags.
 */
export async function serveForCli(serveArgs: string[] = []): Promise<{ server: ChildServer; dataDir: string; admin: NodeJS.ProcessEnv }> {
  const dataDir = tempDir();
  const server = await spawnServe(dataDir, undefined, serveArgs);
  return { server, dataDir, admin: { SUBAKO_HOME: tempDir('subako-cli-home-'), SUBAKO_SERVER: server.url, SUBAKO_API_KEY: server.apiKey } };
}

/** Stops a server started by serveForCli and waits for it to exit. */
export async function stopServe(server: ChildServer): Promise<void> {
  server.child.kill('SIGTERM');
  await server.exited;
}
