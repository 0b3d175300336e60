/** A user's TypeScript project for compiling generated bindings, and a child-process runner. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from '../../helpers/paths.js';

export const TSC = join(REPO_ROOT, 'node_modules', '.bin', 'tsc');

export function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * A strict TypeScript project in which `subako` resolves to this repository as a package (its
 * `exports` and built library entry), the way a user's project sees it after `npm i subako`.
 */
export async function makeProject(work: string, files: Record<string, string>, name = 'project'): Promise<string> {
  const project = join(work, name);
  await mkdir(join(project, 'src'), { recursive: true });
  await mkdir(join(project, 'node_modules'), { recursive: true });
  assert.ok(existsSync(join(REPO_ROOT, 'dist', 'src', 'index.js')), 'the library entry is built');
  await symlink(REPO_ROOT, join(project, 'node_modules', 'subako'), 'dir');
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'user-project', type: 'module', private: true }));
  await writeFile(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023', 'DOM'],
        types: [],
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        noUnusedLocals: true,
        noUnusedParameters: true,
        noImplicitReturns: true,
        noImplicitOverride: true,
        noPropertyAccessFromIndexSignature: true,
        verbatimModuleSyntax: true,
        skipLibCheck: true,
        rootDir: 'src',
        outDir: 'out',
      },
      include: ['src'],
    }),
  );
  for (const [name, text] of Object.entries(files)) await writeFile(join(project, 'src', name), text);
  return project;
}

