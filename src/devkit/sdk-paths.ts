/**
 * Where the installed subako keeps what projects build against: `sdk/<language>` and
 * `templates/<language>` at the package root (both listed in package.json `files`, so an npm install has
 * them). The root is found from this file's own location, so a clone, a global install and a project's
 * `node_modules/subako` all work.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SdkPaths, TemplateName } from './recipe.js';

let cachedRoot: string | undefined;

/** The folder holding subako's own package.json (this file runs from `<root>/dist/src/devkit/`). */
export function subakoPackageRoot(): string {
  if (cachedRoot !== undefined) return cachedRoot;
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'subako') {
      cachedRoot = dir;
      return dir;
    }
    if (dirname(dir) === dir) throw new Error(`subako's package.json was not found above ${fileURLToPath(import.meta.url)}`);
  }
}

export function sdkPaths(template: TemplateName, packageRoot = subakoPackageRoot()): SdkPaths {
  return { packageRoot, sdkDir: join(packageRoot, 'sdk', template), templateDir: join(packageRoot, 'templates', template) };
}
