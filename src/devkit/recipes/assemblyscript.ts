/**
 * The AssemblyScript recipe: `asc` with `@assemblyscript/wasi-shim` builds `assembly/index.ts` into a WASI
 * command module, against the `subako-as` SDK that ships in subako's `sdk/assemblyscript`.
 *
 * Nothing is installed in the project: asc and the shim are resolved from subako's own install, and the SDK
 * through asc's `--path` (asc looks for `<path>/subako-as/index.ts`). The shim's config goes by a path
 * relative to the project, because asc joins its `lib` onto the base directory even when it is absolute.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import type { BuildCommand, BuildRecipe, MissingTool, SdkPaths } from '../recipe.js';

/** The author's entry file, relative to the project. */
export const AS_ENTRY = 'assembly/index.ts';
export const AS_OUTPUT = 'module.wasm';
const INSTALL = 'npm install assemblyscript @assemblyscript/wasi-shim';

export interface AscLocation {
  /** assemblyscript's `bin/asc.js`. */
  ascJs: string;
  /** @assemblyscript/wasi-shim's `asconfig.json`. */
  shimConfig: string;
}

/** Finds asc and the WASI shim as subako's own install resolves them; null for each that is missing. */
export function locateAsc(packageRoot: string): { ascJs: string | null; shimConfig: string | null } {
  const require = createRequire(join(packageRoot, 'package.json'));
  return {
    ascJs: resolveOrNull(require, 'assemblyscript/bin/asc.js'),
    shimConfig: resolveOrNull(require, '@assemblyscript/wasi-shim/asconfig.json'),
  };
}

function resolveOrNull(require: NodeRequire, specifier: string): string | null {
  try {
    return require.resolve(specifier);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return null; // expected: not installed
    throw error;
  }
}

/** The asc command line for a project at `dir` (pure: paths in, arguments out). */
export function ascArguments(dir: string, asc: AscLocation, sdkDir: string): string[] {
  return [
    asc.ascJs,
    AS_ENTRY,
    '--config', relative(dir, asc.shimConfig),
    '--path', sdkDir,
    '-O3',
    '--outFile', AS_OUTPUT,
  ];
}

export const assemblyScriptRecipe: BuildRecipe = {
  template: 'assemblyscript',

  detect(fileNames: readonly string[]): boolean {
    return fileNames.some((name) => name === AS_ENTRY || name === 'asconfig.json' || name === 'assembly' || name === 'assembly/');
  },

  missingTools(sdk: SdkPaths): MissingTool[] {
    const found = locateAsc(sdk.packageRoot);
    const missing: MissingTool[] = [];
    if (found.ascJs === null) missing.push({ tool: 'asc (AssemblyScript)', install: INSTALL });
    if (found.shimConfig === null) missing.push({ tool: '@assemblyscript/wasi-shim', install: INSTALL });
    if (!existsSync(join(sdk.sdkDir, 'subako-as', 'index.ts'))) {
      missing.push({ tool: 'the subako-as SDK', install: `reinstall subako: ${join(sdk.sdkDir, 'subako-as')} is missing` });
    }
    return missing;
  },

  commands(dir: string, sdk: SdkPaths): BuildCommand[] {
    const found = locateAsc(sdk.packageRoot);
    if (found.ascJs === null || found.shimConfig === null) return []; // missingTools says what to install
    return [{ program: process.execPath, args: ascArguments(dir, { ascJs: found.ascJs, shimConfig: found.shimConfig }, sdk.sdkDir) }];
  },

  sourceGlobs: ['assembly/**/*.ts', 'asconfig.json'],
};
