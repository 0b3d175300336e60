import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, found from this compiled file (dist/test/helpers) or its source. */
function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above the test helpers');
    dir = up;
  }
  return dir;
}

export const REPO_ROOT = findRoot();
export const FIXTURES = join(REPO_ROOT, 'test', 'fixtures');
export const fixture = (...parts: string[]): string => join(FIXTURES, ...parts);
