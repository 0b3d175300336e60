/**
 * A project's files as the recipes see them: the listing `detect` reads, and the globs `sourceGlobs`
 * give for `subako dev` to watch. Build outputs and dependency folders are never part of either.
 */
import { readdirSync, watch, type FSWatcher } from 'node:fs';
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

const isWatchedFolder = (name: string): boolean => !IGNORED_DIRS.has(name);

/**
 * Watches every folder of a project (IGNORED_DIRS aside; `.cargo/` is a source) and reports each changed path,
 * relative and POSIX. One watcher per folder rather than `recursive: true`: Node 20's recursive watch on
 * Linux loses a file that an editor (or `sed -i`) replaces by renaming a new one over it, while a folder's
 * own watch sees every entry that changes in it. Folders created later are watched as they appear.
 */
export function watchProject(root: string, onChange: (path: string) => void): { close(): void } {
  const watchers = new Map<string, FSWatcher>();
  const add = (relative: string): void => {
    if (watchers.has(relative)) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(join(root, relative), (_event, name) => {
        if (name === null) return;
        const path = relative === '' ? name.toString() : `${relative}/${name.toString()}`;
        if (!watchers.has(path) && isWatchedFolder(name.toString())) addTree(path); // a new folder: watch it too
        onChange(path);
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return; // not a folder, or gone already
      throw error;
    }
    watcher.on('error', () => {
      // The folder went away (deleted or renamed): its watch ends; a folder made in its place is watched anew.
      watcher.close();
      watchers.delete(relative);
    });
    watchers.set(relative, watcher);
  };
  const addTree = (relative: string): void => {
    let entries;
    try {
      entries = readdirSync(join(root, relative), { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return; // a file, or gone already: nothing to watch
      throw error;
    }
    add(relative);
    for (const entry of entries) {
      if (entry.isDirectory() && isWatchedFolder(entry.name)) {
        addTree(relative === '' ? entry.name : `${relative}/${entry.name}`);
      }
    }
  };
  addTree('');
  return {
    close() {
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
