/**
 * The C recipe: clang for wasm32-wasi with wasi-libc, against the SDK's one header (`sdk/c/subako.h`).
 * A project is C when it holds `.c` sources in `src/` (the template's layout) or at its top. What to
 * compile and the flags are pure functions of the listing; only `missingTools` and `commands` look at the
 * machine or the project's folder.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { MODULE_FILE } from '../../package/index.js';
import type { BuildCommand, BuildRecipe, MissingTool, SdkPaths } from '../recipe.js';
import { onPath } from './on-path.js';

/** Debian's packages for everything the build needs; one line, whichever part is missing. */
export const C_INSTALL = 'apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32';

export const C_SOURCE_GLOBS: readonly string[] = ['src/**/*.c', 'src/**/*.h', '*.c', '*.h'];

const isSourceIn = (folder: 'src/' | '') => (name: string): boolean =>
  name.startsWith(folder) && name.endsWith('.c') && !name.slice(folder.length).includes('/');

/**
 * The files to compile, relative to the project, sorted: those directly in `src/`, or, when `src/` has
 * none, those at the top. Pure on the listing.
 */
export function cSources(fileNames: readonly string[]): string[] {
  const inSrc = fileNames.filter(isSourceIn('src/'));
  return [...(inSrc.length > 0 ? inSrc : fileNames.filter(isSourceIn('')))].sort();
}

/** clang's arguments: `-s` strips the names (about a fifth of the size), `-I` finds subako.h. Pure. */
export function clangArgs(sources: readonly string[], sdkDir: string, output = MODULE_FILE): string[] {
  return ['--target=wasm32-wasi', '-O2', '-s', `-I${sdkDir}`, '-o', output, ...sources];
}

/** True when clang finds wasi-libc's headers for wasm32-wasi (wherever the distribution put them). */
function wasiHeadersFound(clang: string): boolean {
  const run = spawnSync(clang, ['--target=wasm32-wasi', '-fsyntax-only', '-x', 'c', '-'], { input: '#include <stdio.h>\n', encoding: 'utf8' });
  return run.status === 0;
}

/** True when the wasm32 builtins library (compiler-rt) that clang links into every module is there. */
function builtinsFound(clang: string): boolean {
  const run = spawnSync(clang, ['--target=wasm32-wasi', '-print-libgcc-file-name'], { encoding: 'utf8' });
  const path = run.status === 0 ? run.stdout.trim() : '';
  return path !== '' && existsSync(path);
}

function listProjectSources(dir: string): string[] {
  const names = (folder: string): string[] => {
    try {
      return readdirSync(join(dir, folder), { withFileTypes: true }).filter((e) => e.isFile()).map((e) => `${folder}${e.name}`);
    } catch {
      return []; // no such folder: no sources in it
    }
  };
  return cSources([...names('src/'), ...names('')]);
}

export const cRecipe: BuildRecipe = {
  template: 'c',

  detect(fileNames) {
    return cSources(fileNames).length > 0;
  },

  missingTools(_dir: string, sdk: SdkPaths): MissingTool[] {
    const missing: MissingTool[] = [];
    const clang = onPath('clang', process.env.PATH);
    if (!clang) missing.push({ tool: 'clang', install: C_INSTALL });
    if (!onPath('wasm-ld', process.env.PATH)) missing.push({ tool: 'wasm-ld (lld)', install: C_INSTALL });
    if (clang && !wasiHeadersFound(clang)) missing.push({ tool: 'wasi-libc (the wasm32-wasi C library)', install: C_INSTALL });
    if (clang && !builtinsFound(clang)) missing.push({ tool: 'compiler-rt for wasm32 (libclang_rt.builtins-wasm32.a)', install: C_INSTALL });
    if (!existsSync(join(sdk.sdkDir, 'subako.h'))) {
      missing.push({ tool: `subako.h (not in ${sdk.sdkDir})`, install: 'npm install subako (this installation of subako lacks its sdk/ folder)' });
    }
    return missing;
  },

  commands(dir: string, sdk: SdkPaths, output?: string): BuildCommand[] {
    // By name: the spawn finds the first clang on PATH, the one missingTools looked at.
    return [{ program: 'clang', args: clangArgs(listProjectSources(dir), sdk.sdkDir, output) }];
  },

  sourceGlobs: C_SOURCE_GLOBS,
};
