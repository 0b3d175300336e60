/**
 * `subako init`: a new package project from a template. The template's files are copied with their
 * placeholders filled and their npm-safe names restored; nothing is written into a directory that holds
 * files already, so an init can never overwrite someone's work. What the first build will lack (a
 * compiler not installed, or AssemblyScript not yet in the project) is told at once, not at the build.
 */
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { ValidationError } from '../errors.js';
import { validateManifest } from '../package/index.js';
import { DevkitError, DEVKIT_ERRORS } from './errors.js';
import { fillPlaceholders, projectPath, type TemplateValues } from './placeholders.js';
import type { MissingTool, SdkPaths, TemplateName } from './recipe.js';
import { recipeFor } from './registry.js';

export interface InitOptions {
  dir: string;
  template: TemplateName;
  sdk: SdkPaths;
  /** The package name; default: the directory's name. */
  name?: string;
  description?: string;
}

export interface InitResult {
  dir: string;
  name: string;
  template: TemplateName;
  /** The files written, relative POSIX paths, sorted. */
  files: string[];
  /** What the template's build needs that this machine (or the new project) does not have yet; empty when it can build. */
  missing: MissingTool[];
}

export const DEFAULT_DESCRIPTION = 'A subako function package.';

/** The package name for a project: `--name` as given, else the directory's name; checked by the manifest's rule. */
export function packageNameFor(dir: string, name: string | undefined, description: string): string {
  const chosen = name ?? basename(resolve(dir));
  const problems = validateManifest({ abi: 1, name: chosen, description }).problems;
  if (problems.length > 0) {
    const hint = name === undefined ? ` (taken from the directory's name; pass --name to choose another)` : '';
    throw new ValidationError(problems.map((p) => ({ ...p, message: `${p.message}${hint}` })));
  }
  return chosen;
}

async function templateFiles(root: string, relative = ''): Promise<string[]> {
  const entries = await readdir(join(root, relative), { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
    if (entry.isDirectory()) files.push(...(await templateFiles(root, path)));
    else if (entry.isFile()) files.push(path);
  }
  return files.sort();
}

async function refuseNonEmpty(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR') throw new DevkitError(DEVKIT_ERRORS.notEmpty, `${dir} is a file; give subako init a new or empty directory`);
    throw error;
  }
  if (names.length > 0) {
    throw new DevkitError(DEVKIT_ERRORS.notEmpty, `${dir} is not empty (it holds ${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''}); give subako init a new or empty directory`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function asText(bytes: Buffer): string | null {
  try {
    return utf8.decode(bytes);
  } catch (error) {
    if (error instanceof TypeError) return null; // not UTF-8: a binary file, copied as it is
    throw error;
  }
}

export async function initProject(options: InitOptions): Promise<InitResult> {
  const dir = resolve(options.dir);
  const description = options.description ?? DEFAULT_DESCRIPTION;
  const name = packageNameFor(dir, options.name, description);
  const templateRoot = options.sdk.templateDir;
  const present = await stat(templateRoot).then((s) => s.isDirectory(), (error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return false;
    throw error;
  });
  if (!present) throw new DevkitError(DEVKIT_ERRORS.template, `this subako has no ${options.template} template (${templateRoot} is missing); reinstall subako`);
  await refuseNonEmpty(dir);
  const values: TemplateValues = { name, description, sdk_dir: options.sdk.sdkDir };
  const written: string[] = [];
  for (const file of await templateFiles(templateRoot)) {
    const source = join(templateRoot, file);
    const target = projectPath(file);
    const bytes = await readFile(source);
    const text = asText(bytes);
    const out = join(dir, target);
    await mkdir(join(out, '..'), { recursive: true });
    await writeFile(out, text === null ? bytes : fillPlaceholders(text, values, target), { flag: 'wx' });
    // Executable scripts (a template's test.sh) stay executable.
    await chmod(out, (await stat(source)).mode & 0o777);
    written.push(target);
  }
  return { dir, name, template: options.template, files: written.sort(), missing: recipeFor(options.template).missingTools(dir, options.sdk) };
}
