/**
 * A build never leaves a module half written where it is read: two builds of one C project at once (what
 * `subako dev` rebuilding on a change and `subako build` by hand do), with a reader taking `module.wasm` the
 * whole time, only ever read whole modules; a build that fails keeps the last good module; nothing of a build's
 * own is left behind. (The README's tutorial met this under `npm test`: with binaryen's `wasm-opt` on PATH, clang
 * runs it over its output in place, and `subako build` read the module `subako dev` was rewriting.)
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { runRecipe } from '../../src/devkit/index.js';
import { DevkitError } from '../../src/devkit/errors.js';
import { cRecipe } from '../../src/devkit/recipes/c.js';
import { checkoutSdk } from '../helpers/toolchains.js';
import { REPO_ROOT } from '../helpers/paths.js';

describe('a build writes its module whole or not at all', () => {
  const project = mkdtempSync(join(tmpdir(), 'subako-build-atomic-'));
  cpSync(join(REPO_ROOT, 'templates', 'c'), project, { recursive: true });
  const sdk = checkoutSdk('c');
  const quiet = (): void => undefined;
  // wasm-opt on PATH, as npm puts it there for `npm test` (binaryen comes with AssemblyScript): clang then
  // rewrites its output in place, which is what a reader could catch half done.
  const path = process.env.PATH;
  process.env.PATH = [join(REPO_ROOT, 'node_modules', '.bin'), path].join(delimiter);
  after(() => {
    process.env.PATH = path;
    rmSync(project, { recursive: true, force: true });
  });

  it('two builds at once, read all along: every read is a whole module, and no partial file is left', async () => {
    await runRecipe(project, cRecipe, sdk, quiet);
    let reads = 0;
    const broken: string[] = [];
    let building = true;
    const reading = (async () => {
      while (building) {
        const bytes = readFileSync(join(project, 'module.wasm'));
        reads += 1;
        if (!WebAssembly.validate(bytes)) broken.push(`a read of ${bytes.length} bytes is not a whole module`);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    try {
      for (let round = 0; round < 2; round++) await Promise.all([runRecipe(project, cRecipe, sdk, quiet), runRecipe(project, cRecipe, sdk, quiet)]);
    } finally {
      building = false;
      await reading;
    }
    assert.ok(reads > 10, `the module was read while it was built (${reads} reads)`);
    assert.deepEqual(broken, []);
    assert.deepEqual(readdirSync(project).filter((name) => name.includes('partial')), [], 'no build left its own file behind');
  });

  it('a build that fails keeps the last good module and leaves nothing of its own', async () => {
    await runRecipe(project, cRecipe, sdk, quiet);
    const good = readFileSync(join(project, 'module.wasm'));
    writeFileSync(join(project, 'src', 'broken.c'), 'this is not C;\n');
    try {
      await assert.rejects(runRecipe(project, cRecipe, sdk, quiet), (err: unknown) => err instanceof DevkitError && /clang exited with status/.test(err.message));
    } finally {
      rmSync(join(project, 'src', 'broken.c'));
    }
    assert.ok(existsSync(join(project, 'module.wasm')));
    assert.deepEqual(readFileSync(join(project, 'module.wasm')), good);
    assert.deepEqual(readdirSync(project).filter((name) => name.includes('partial')), []);
  });

  it('a build whose commands succeed but write no module is refused in one line, and the last module stays', async () => {
    const good = readFileSync(join(project, 'module.wasm'));
    const silent = { ...cRecipe, commands: () => [{ program: process.execPath, args: ['-e', ''] }] };
    await assert.rejects(runRecipe(project, silent, sdk, quiet), (err: unknown) => err instanceof DevkitError && /the c build ended without writing module\.wasm/.test(err.message));
    assert.deepEqual(readFileSync(join(project, 'module.wasm')), good);
  });
});
