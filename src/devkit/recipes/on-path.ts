/**
 * Programs found the way a shell finds them: each folder of PATH in order, an executable file of that name.
 * Pure on its arguments but for the file system's answers; the recipes pass `process.env.PATH`, tests
 * their own.
 */
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false; // not there, or not executable: as a shell would, look further
  }
}

/** Every `program` on `path`, in PATH's order, each real file once (/bin and /usr/bin are often one folder). */
export function allOnPath(program: string, path: string | undefined): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, program);
    if (!isExecutable(candidate)) continue;
    const real = realpathSync(candidate);
    if (seen.has(real)) continue;
    seen.add(real);
    found.push(candidate);
  }
  return found;
}

/** The first `program` on `path`, as an executable file; null when there is none. */
export function onPath(program: string, path: string | undefined): string | null {
  return allOnPath(program, path)[0] ?? null;
}

/** A program named by a setting: a path as it is (when executable), a bare name looked up on `path`. */
export function programNamed(value: string, path: string | undefined): string | null {
  if (value.includes('/')) return isExecutable(value) ? value : null;
  return onPath(value, path);
}
