/**
 * The AssemblyScript build recipe: what it recognises, the asc command line it builds from an arbitrary
 * project directory, where it finds asc (the project's node_modules first, then subako's own install: the
 * server does not depend on AssemblyScript), and the one-line advice when neither has it. The project-first
 * case is a real build: asc from the project compiles the template while subako's root has no asc at all.
 * (The SDK's guests are built and run in test/sdk/assemblyscript.test.ts.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initProject, runRecipe } from '../../src/devkit/index.js';
import type { SdkPaths } from '../../src/devkit/recipe.js';
import { AS_INSTALL, AS_PACKAGES, AS_OUTPUT, assemblyScriptRecipe, ascArguments, locateAsc } from '../../src/devkit/recipes/assemblyscript.js';
import { REPO_ROOT } from '../helpers/paths.js';

// asc takes seconds of CPU per build, many more on a loaded machine.
const BUILD_TIMEOUT_MS = 300_000;

const readJson = (path: string): { dependencies?: Record<string, string>; devDependencies?: Record<string, string> } =>
  JSON.parse(readFileSync(path, 'utf8'));

let scratch: string;
/** A subako install without AssemblyScript: its own package.json, and nothing in node_modules. */
let bareRoot: string;
/** The installed SDK and templates, with the root above replaced by `bareRoot`. */
let bareSdk: SdkPaths;

before(() => {
  scratch = mkdtempSync(join(tmpdir(), 'subako-as-recipe-'));
  bareRoot = join(scratch, 'bare-subako');
  mkdirSync(bareRoot);
  writeFileSync(join(bareRoot, 'package.json'), '{"name":"subako"}');
  bareSdk = { packageRoot: bareRoot, sdkDir: join(REPO_ROOT, 'sdk', 'assemblyscript'), templateDir: join(REPO_ROOT, 'templates', 'assemblyscript') };
});
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A project folder, empty or with asc and the shim in its node_modules (linked from this checkout's, as npm would place them). */
function project(name: string, withAsc: boolean): string {
  const dir = join(scratch, name);
  mkdirSync(join(dir, 'assembly'), { recursive: true });
  if (withAsc) {
    mkdirSync(join(dir, 'node_modules', '@assemblyscript'), { recursive: true });
    symlinkSync(join(REPO_ROOT, 'node_modules', 'assemblyscript'), join(dir, 'node_modules', 'assemblyscript'));
    symlinkSync(join(REPO_ROOT, 'node_modules', '@assemblyscript', 'wasi-shim'), join(dir, 'node_modules', '@assemblyscript', 'wasi-shim'));
  }
  return dir;
}

describe('the AssemblyScript recipe', () => {
  it('recognises a project by assembly/index.ts or an asconfig.json, and nothing else', () => {
    assert.equal(assemblyScriptRecipe.detect(['subako-package.json', 'assembly/index.ts']), true);
    assert.equal(assemblyScriptRecipe.detect(['asconfig.json']), true);
    assert.equal(assemblyScriptRecipe.detect(['assembly']), true);
    assert.equal(assemblyScriptRecipe.detect(['subako-package.json', 'main.c']), false);
    assert.equal(assemblyScriptRecipe.detect(['Cargo.toml', 'src']), false);
  });

  it("gives asc the shim's config by a path relative to the project, and the SDK through --path", () => {
    const args = ascArguments('/home/ada/tools/hello', { ascJs: '/opt/subako/node_modules/assemblyscript/bin/asc.js', shimConfig: '/opt/subako/node_modules/@assemblyscript/wasi-shim/asconfig.json' }, '/opt/subako/sdk/assemblyscript');
    assert.deepEqual(args, [
      '/opt/subako/node_modules/assemblyscript/bin/asc.js',
      'assembly/index.ts',
      '--config', '../../../../opt/subako/node_modules/@assemblyscript/wasi-shim/asconfig.json',
      '--path', '/opt/subako/sdk/assemblyscript',
      '-O3',
      '--outFile', 'module.wasm',
    ]);
  });

  it("finds asc and the shim from subako's own install when the project has none (a clone: they are its devDependencies)", () => {
    const dir = project('without-asc', false);
    const found = locateAsc(dir, REPO_ROOT);
    assert.match(found.ascJs ?? '', /assemblyscript[/\\]bin[/\\]asc\.js$/);
    assert.match(found.shimConfig ?? '', /wasi-shim[/\\]asconfig\.json$/);
    const sdk = { ...bareSdk, packageRoot: REPO_ROOT };
    assert.deepEqual(assemblyScriptRecipe.missingTools(dir, sdk), []);
    const [command] = assemblyScriptRecipe.commands(dir, sdk);
    assert.equal(command.program, process.execPath);
    assert.equal(command.args[0], found.ascJs);
  });

  it('an install and a project without AssemblyScript say, in one line, what to install in the project, and build nothing', () => {
    const dir = project('neither', false);
    const missing = assemblyScriptRecipe.missingTools(dir, bareSdk);
    assert.deepEqual(missing.map((m) => m.tool), ['asc (AssemblyScript)', '@assemblyscript/wasi-shim']);
    assert.equal(missing[0].install, 'npm install --save-dev assemblyscript@^0.28.20 @assemblyscript/wasi-shim@^0.1.0 (in the project)');
    assert.equal(missing[1].install, AS_INSTALL);
    assert.deepEqual(assemblyScriptRecipe.commands(dir, bareSdk), []);
  });

  it("builds with the project's own asc when subako's install has none", { timeout: BUILD_TIMEOUT_MS }, async () => {
    const dir = project('with-asc', true);
    cpSync(join(bareSdk.templateDir, 'assembly'), join(dir, 'assembly'), { recursive: true });
    assert.deepEqual(assemblyScriptRecipe.missingTools(dir, bareSdk), []);
    await runRecipe(dir, assemblyScriptRecipe, bareSdk, () => {});
    const wasm = readFileSync(join(dir, AS_OUTPUT));
    assert.deepEqual([...wasm.subarray(0, 4)], [0x00, 0x61, 0x73, 0x6d], 'module.wasm is a WebAssembly module');
  });

  it('init of the template says what the first build lacks when neither the project nor subako has AssemblyScript', async () => {
    const result = await initProject({ dir: join(scratch, 'fresh-as'), template: 'assemblyscript', sdk: bareSdk });
    assert.deepEqual(result.missing.map((m) => m.install), [AS_INSTALL, AS_INSTALL]);
    const withSubakos = await initProject({ dir: join(scratch, 'fresh-as-2'), template: 'assemblyscript', sdk: { ...bareSdk, packageRoot: REPO_ROOT } });
    assert.deepEqual(withSubakos.missing, []);
  });
});

describe('AssemblyScript is the project\'s dependency, not the server\'s', () => {
  it('subako installs no AssemblyScript for a server; the template and subako\'s own tests ask for the versions the recipe names', () => {
    const subako = readJson(join(REPO_ROOT, 'package.json'));
    const template = readJson(join(REPO_ROOT, 'templates', 'assemblyscript', 'package.json'));
    for (const [name, range] of Object.entries(AS_PACKAGES)) {
      assert.equal(subako.dependencies?.[name], undefined, `${name} is not among subako's runtime dependencies`);
      assert.equal(subako.devDependencies?.[name], range, `subako's tests build with ${name}@${range}`);
      assert.equal(template.devDependencies?.[name], range, `the template's project installs ${name}@${range}`);
    }
  });
});
