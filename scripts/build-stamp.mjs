#!/usr/bin/env node
// Whether dist/ was built from the sources as they are now, told by a stamp: a SHA-256 over every file the
// build reads (its path and bytes), written into dist/ when a build ends.
//
//   node scripts/build-stamp.mjs write    writes the stamp of the sources as they are (the end of `npm run build`)
//   node scripts/build-stamp.mjs ensure   builds (`npm run build`) only when the stamp differs or is missing
//
// `ensure` is `prepare` and the start of `npm test`: npm runs `prepare` on `npm ci`, `npm link` and every
// `npm install`, and a clone built once need not be built again by each of them.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(ROOT, 'dist', '.build-stamp');
/** What tsc and vite read: the sources, their configurations, and the installed dependencies' versions. */
const INPUTS = ['src', 'test', 'bench', 'console', 'tsconfig.json', 'package.json', 'package-lock.json'];
/** What the build writes or a run leaves; never an input. */
const SKIPPED = new Set(['node_modules', 'dist', '.git']);
/** The outputs the build must have left, so a stamp beside a half-emptied dist/ does not count. */
const OUTPUTS = ['dist/src/cli/main.js', 'dist/console/index.html'];

function files(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return [];
  if (!stat.isDirectory()) return [path];
  return readdirSync(path).filter((name) => !SKIPPED.has(name) && !name.startsWith('.readme-')).flatMap((name) => files(join(path, name)));
}

export function sourcesStamp() {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap((input) => files(join(ROOT, input))).sort()) {
    hash.update(relative(ROOT, file).split(sep).join('/')).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

const built = () => existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === sourcesStamp() && OUTPUTS.every((out) => existsSync(join(ROOT, out)));

const mode = process.argv[2];
if (mode === 'write') {
  writeFileSync(STAMP, `${sourcesStamp()}\n`);
} else if (mode === 'ensure') {
  if (built()) {
    console.log('subako: dist/ is built from these sources (dist/.build-stamp); not building again');
  } else {
    // npm sets npm_execpath in its scripts; outside them, the npm on PATH.
    const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
    const build = spawnSync(npm[0], [...npm.slice(1), 'run', 'build'], { cwd: ROOT, stdio: 'inherit' });
    process.exit(build.status ?? 1);
  }
} else {
  console.error('usage: node scripts/build-stamp.mjs write|ensure');
  process.exit(2);
}
