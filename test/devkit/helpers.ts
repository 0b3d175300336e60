/** The devkit tests run `subako` as a person does: a real process, its output and exit status. */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';

export const SUBAKO = join(REPO_ROOT, 'bin', 'subako.js');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function subako(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SUBAKO, ...args], {
      cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export const scratchDir = (prefix: string): string => mkdtempSync(join(tmpdir(), `subako-devkit-${prefix}-`));

/** The problems `subako check --json` reports for a path, as `code: message` lines. */
export async function checkProblems(path: string): Promise<string[]> {
  const run = await subako(['check', path, '--json']);
  return (JSON.parse(run.stdout) as { problems: { code: string; message: string }[] }).problems.map((p) => `${p.code}: ${p.message}`);
}
