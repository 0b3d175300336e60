/**
 * The AssemblyScript recipe: `asc` with `@assemblyscript/wasi-shim` builds `assembly/index.ts` into a WASI
 * command module, against the `subako-as` SDK that ships in subako's `sdk/assemblyscript`.
 *
 * asc is the project's, not the server's: subako does not depend on AssemblyScript (its compiler and
 * binaryen are about 100 MB every server install would carry for nothing). The template lists asc and the
 * shim as the project's devDependencies, so `npm install` in the project brings them; they are looked for
 * from the project first, then from subako's own install (a clone has them as devDependencies). The SDK goes
 * through asc's `--path` (asc looks for `<path>/subako-as/index.ts`). The shim's config goes by a path
 * relative to the project, because asc joins its `lib` onto the base directory even when it is absolute.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { MODULE_FILE } from '../../package/index.js';
import type { BuildCommand, BuildRecipe, MissingTool, SdkPaths } from '../recipe.js';

/** The author's entry file, relative to the project. */
export const AS_ENTRY = 'assembly/index.ts';
export const AS_OUTPUT = MODULE_FILE;
/**
 * The versions the SDK is built and tested with: the template's package.json and subako's own
 * devDependencies ask for the same (test/devkit/assemblyscript-recipe.test.ts holds them together).
 */
export const AS_PACKAGES: Readonly<Record<string, string>> = { 'assemblyscript': '^0.28.20', '@assemblyscript/wasi-shim': '^0.1.0' };
/** Run in the project: a template's package.json lists both already, and this adds them to any other. */
export const AS_INSTALL = `npm install --save-dev ${Object.entries(AS_PACKAGES).map(([name, range]) => `${name}@${range}`).join(' ')} (in the project)`;

export interface AscLocation {
  /** assemblyscript's `bin/asc.js`. */
  ascJs: string;
  /** @assemblyscript/wasi-shim's `asconfig.json`. */
  shimConfig: string;
}

/**
 * Finds asc and the WASI shim as the project at `dir` resolves them (its node_modules, or a folder above
 * it), else as subako's own install does; null for each that neither has.
 */
export function locateAsc(dir: string, packageRoot: string): { ascJs: string | null; shimConfig: string | null } {
  const fromProject = createRequire(join(dir, 'package.json'));
  const fromSubako = createRequire(join(packageRoot, 'package.json'));
  const find = (specifier: string): string | null => resolveOrNull(fromProject, specifier) ?? resolveOrNull(fromSubako, specifier);
  return { ascJs: find('assemblyscript/bin/asc.js'), shimConfig: find('@assemblyscript/wasi-shim/asconfig.json') };
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
export function ascArguments(dir: string, asc: AscLocation, sdkDir: string, output = AS_OUTPUT): string[] {
  return [
    asc.ascJs,
    AS_ENTRY,
    '--config', relative(dir, asc.shimConfig),
    '--path', sdkDir,
    '-O3',
    '--outFile', output,
  ];
}

export const assemblyScriptRecipe: BuildRecipe = {
  template: 'assemblyscript',

  detect(fileNames: readonly string[]): boolean {
    return fileNames.some((name) => name === AS_ENTRY || name === 'asconfig.json' || name === 'assembly' || name === 'assembly/');
  },

  missingTools(dir: string, sdk: SdkPaths): MissingTool[] {
    const found = locateAsc(dir, sdk.packageRoot);
    const missing: MissingTool[] = [];
    if (found.ascJs === null) missing.push({ tool: 'asc (AssemblyScript)', install: AS_INSTALL });
    if (found.shimConfig === null) missing.push({ tool: '@assemblyscript/wasi-shim', install: AS_INSTALL });
    if (!existsSync(join(sdk.sdkDir, 'subako-as', 'index.ts'))) {
      missing.push({ tool: 'the subako-as SDK', install: `reinstall subako: ${join(sdk.sdkDir, 'subako-as')} is missing` });
    }
    return missing;
  },

  commands(dir: string, sdk: SdkPaths, output?: string): BuildCommand[] {
    const found = locateAsc(dir, sdk.packageRoot);
    if (found.ascJs === null || found.shimConfig === null) return []; // missingTools says what to install
    return [{ program: process.execPath, args: ascArguments(dir, { ascJs: found.ascJs, shimConfig: found.shimConfig }, sdk.sdkDir, output) }];
  },

  sourceGlobs: ['assembly/**/*.ts', 'asconfig.json'],
};
