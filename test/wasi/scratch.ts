/** Scratch directories for WASI tests, and snapshots that prove a tree was not touched. */
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function scratchDir(prefix = 'subako-wasi-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(process.env.SUBAKO_TEST_TMP ?? tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Every entry under `root` with its type, size, mtime and content (or link text), sorted. */
export function snapshotTree(root: string): string[] {
  const lines: string[] = [];
  const walk = (dir: string, rel: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const stat = lstatSync(path, { bigint: true });
      const what = stat.isSymbolicLink() ? `link:${readlinkSync(path)}`
        : stat.isDirectory() ? 'dir' : `file:${readFileSync(path).toString('base64')}`;
      lines.push(`${rel}${name} ${what} size=${stat.size} mtime=${stat.mtimeNs} mode=${stat.mode}`);
      if (stat.isDirectory()) walk(path, `${rel}${name}/`);
    }
  };
  walk(root, '');
  return lines;
}
