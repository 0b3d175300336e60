/**
 * `subako build`: the project's recipe turns its sources into `module.wasm`, then the package goes through
 * the upload checks and discovery (inspect.ts) exactly as an upload would. The recipe's commands write to
 * our stderr as they run, so a compiler error reads as the compiler wrote it.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { FunctionHost } from '../function/index.js';
import { DevkitError, DEVKIT_ERRORS } from './errors.js';
import { inspectPackage, type PackageInspection } from './inspect.js';
import { listProject } from './project-files.js';
import { MODULE_FILE } from '../package/index.js';
import type { BuildCommand, BuildRecipe, MissingTool, SdkPaths } from './recipe.js';
import { detectRecipe } from './registry.js';
import { sdkPaths } from './sdk-paths.js';

export interface BuildOptions {
  /** Where the commands' output goes; default: straight to this process's stderr. */
  onOutput?: (chunk: Buffer) => void;
  /** Given for a test or another install: default, the installed subako's own sdk/ and templates/. */
  sdk?: (recipe: BuildRecipe) => SdkPaths;
}

export interface BuildResult {
  recipe: BuildRecipe;
  /** What the checks and discovery found of the built package; `problems` empty when it is accepted. */
  inspection: PackageInspection;
}

/** The one line that says what to install: the tools by name, each distinct install command once. */
export function missingToolsMessage(template: string, missing: readonly MissingTool[]): string {
  const tools = missing.map((m) => m.tool).join(', ');
  const installs = [...new Set(missing.map((m) => m.install))].join('; and ');
  return `the ${template} build needs ${tools}, not found on this machine; install ${missing.length === 1 ? 'it' : 'them'} with: ${installs}`;
}

function run(command: BuildCommand, cwd: string, onOutput: BuildOptions['onOutput']): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(command.program, command.args, {
      cwd,
      env: { ...process.env, ...command.env },
      stdio: onOutput ? ['ignore', 'pipe', 'pipe'] : ['ignore', process.stderr, process.stderr],
    });
    if (onOutput) {
      child.stdout!.on('data', onOutput);
      child.stderr!.on('data', onOutput);
    }
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') {
        fail(new DevkitError(DEVKIT_ERRORS.toolchain, `${command.program} is not installed (or not on PATH); the build cannot run it`));
      } else {
        fail(error);
      }
    });
    child.once('close', (code, signal) => {
      if (code === 0) done();
      else fail(new DevkitError(DEVKIT_ERRORS.buildFailed, `${command.program} ${signal ? `was stopped by ${signal}` : `exited with status ${code}`}; the build stopped (its output is above)`));
    });
  });
}

/**
 * Runs the recipe's commands in the project, one after another; throws a DevkitError on the first failure.
 * The module is built under a name of this build's own and renamed over `module.wasm` once whole: a build beside
 * another in the same project (`subako dev` rebuilding on a change while `subako build` runs by hand) and
 * whoever reads the module (the checks, a running `dev`) never see one half written. (clang's own link is
 * atomic, but with binaryen's `wasm-opt` on PATH clang runs it over the output in place.)
 */
export async function runRecipe(dir: string, recipe: BuildRecipe, sdk: SdkPaths, onOutput?: BuildOptions['onOutput']): Promise<void> {
  const missing = recipe.missingTools(dir, sdk);
  if (missing.length > 0) throw new DevkitError(DEVKIT_ERRORS.toolchain, missingToolsMessage(recipe.template, missing));
  // Ends in .wasm: a compiler may choose its output's format by the name's extension.
  const partial = `.module-${process.pid}-${randomBytes(4).toString('hex')}.partial.wasm`;
  try {
    for (const command of recipe.commands(dir, sdk, partial)) await run(command, dir, onOutput);
    try {
      renameSync(join(dir, partial), join(dir, MODULE_FILE));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      throw new DevkitError(DEVKIT_ERRORS.buildFailed, `the ${recipe.template} build ended without writing ${MODULE_FILE}; its output is above`);
    }
  } finally {
    rmSync(join(dir, partial), { force: true });
  }
}

/** The project's recipe, found from its files. */
export async function projectRecipe(dir: string): Promise<BuildRecipe> {
  return detectRecipe(await listProject(dir), dir);
}

export async function buildProject(projectDir: string, host: FunctionHost, options: BuildOptions = {}): Promise<BuildResult> {
  const dir = resolve(projectDir);
  const recipe = await projectRecipe(dir);
  const sdk = options.sdk ? options.sdk(recipe) : sdkPaths(recipe.template);
  await runRecipe(dir, recipe, sdk, options.onOutput);
  return { recipe, inspection: await inspectPackage(dir, host) };
}
