/**
 * A project's files as the recipes see them: the listing `detect` reads, and the globs `sourceGlobs`
 * give for `subako dev` to watch. Build outputs and dependency folders are never part of either.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Folders that hold what a build or a package manager wrote, never the author's sources. */
export const IGNORED_DIRS: ReadonlySet<string> = new Set(['node_modules', 'target', 'build', 'dist', '.git']);

/** How deep `listProject` looks: enough for `src/main.c`, `assembly/index.ts`, `src/tools/x.rs`. */
const LISTING_DEPTH = 3;

/** The project's files as relative POSIX paths, sorted (dot-folders and IGNORED_DIRS left out). */
export async function listProject(dir: string, depth = LISTING_DEPTH): Promise<string[]> {
  const found: string[] = [];
  const walk = async (relative: string, level: number): Promise<void> => {
    const entries = await readdir(join(dir, relative), { withFileTypes: true });
    for (const entry of entries) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (level + 1 < depth && !IGNORED_DIRS.has(entry.name) && !entry.name.startsWith('.')) await walk(path, level + 1);
      } else if (entry.isFile()) {
        found.push(path);
      }
    }
  };
  await walk('', 0);
  return found.sort();
}

/** A glob (`*` within a path part, `**` across parts, `?` one character) as a RegExp on POSIX paths. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i += 1) {
    const char = glob[i];
    if (char === '*' && glob[i + 1] === '*') {
      // `**/` matches zero or more whole parts; a trailing `**` matches the rest.
      if (glob[i + 2] === '/') {
        source += '(?:[^/]+/)*';
        i += 2;
      } else {
        source += '.*';
        i += 1;
      }
    } else if (char === '*') {
      source += '[^/]*';
    } else if (char === '?') {
      source += '[^/]';
    } else {
      source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`);
}

/** A matcher for a recipe's `sourceGlobs`: true when a changed path (relative, POSIX) means a rebuild. */
export function sourceMatcher(globs: readonly string[]): (path: string) => boolean {
  const patterns = globs.map(globToRegExp);
  return (path) => {
    const parts = path.split('/');
    if (parts.some((part) => IGNORED_DIRS.has(part))) return false;
    return patterns.some((pattern) => pattern.test(path));
  };
}
