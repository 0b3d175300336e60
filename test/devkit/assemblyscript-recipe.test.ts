/**
 * The AssemblyScript build recipe's pure parts: what it recognises, the asc command line it builds from
 * an arbitrary project directory, and the one-line advice when asc or the shim cannot be resolved.
 * (The commands themselves run in test/sdk/assemblyscript.test.ts, which builds real guests with them.)
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assemblyScriptRecipe, ascArguments, locateAsc } from '../../src/devkit/recipes/assemblyscript.js';
import { REPO_ROOT } from '../helpers/paths.js';

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

  it("finds asc and the shim from subako's own install", () => {
    const found = locateAsc(REPO_ROOT);
    assert.match(found.ascJs ?? '', /assemblyscript[/\\]bin[/\\]asc\.js$/);
    assert.match(found.shimConfig ?? '', /wasi-shim[/\\]asconfig\.json$/);
    const sdk = { packageRoot: REPO_ROOT, sdkDir: join(REPO_ROOT, 'sdk', 'assemblyscript'), templateDir: join(REPO_ROOT, 'templates', 'assemblyscript') };
    assert.deepEqual(assemblyScriptRecipe.missingTools(sdk), []);
    const [command] = assemblyScriptRecipe.commands('/tmp/somewhere', sdk);
    assert.equal(command.program, process.execPath);
    assert.equal(command.args[0], found.ascJs);
  });

  it('an install without AssemblyScript says which npm packages to install, and builds nothing', () => {
    const bare = mkdtempSync(join(tmpdir(), 'subako-no-asc-'));
    try {
      writeFileSync(join(bare, 'package.json'), '{"name":"bare"}');
      const sdk = { packageRoot: bare, sdkDir: join(bare, 'sdk', 'assemblyscript'), templateDir: join(bare, 'templates', 'assemblyscript') };
      const missing = assemblyScriptRecipe.missingTools(sdk);
      assert.deepEqual(missing.map((m) => m.tool), ['asc (AssemblyScript)', '@assemblyscript/wasi-shim', 'the subako-as SDK']);
      assert.equal(missing[0].install, 'npm install assemblyscript @assemblyscript/wasi-shim');
      assert.deepEqual(assemblyScriptRecipe.commands(bare, sdk), []);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });
});
