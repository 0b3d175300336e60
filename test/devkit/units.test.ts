/** The devkit's pure rules: placeholders, template names, globs, the choice of a Rust toolchain. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  debounced, detectRecipe, fillPlaceholders, globToRegExp, missingToolsMessage, projectPath, sourceMatcher,
} from '../../src/devkit/index.js';
import { chooseRustToolchain } from '../../src/devkit/recipes/rust-toolchain.js';
import { RUST_INSTALL } from '../../src/devkit/recipes/rust.js';

describe('template placeholders', () => {
  const values = { name: 'weather', description: 'Says "hi"\nand \\ more', sdk_dir: '/opt/subako/sdk/c' };

  test('inside source and config files a value is escaped as a string literal\'s contents', () => {
    const json = fillPlaceholders('{"name": "{{name}}", "description": "{{description}}"}', values, 'subako-package.json');
    assert.deepEqual(JSON.parse(json), { name: 'weather', description: values.description });
    assert.equal(fillPlaceholders('path = "{{sdk_dir}}"', values, 'Cargo.toml'), 'path = "/opt/subako/sdk/c"');
  });

  test('in prose a value goes in as written', () => {
    assert.equal(fillPlaceholders('# {{name}}\n{{description}}', values, 'README.md'), `# weather\n${values.description}`);
  });

  test('other braces are left alone', () => {
    assert.equal(fillPlaceholders('{{other}} {"a":{}}', values, 'main.c'), '{{other}} {"a":{}}');
  });

  test('npm-safe names become the dot names in the project', () => {
    assert.equal(projectPath('_gitignore'), '.gitignore');
    assert.equal(projectPath('_cargo/config.toml'), '.cargo/config.toml');
    assert.equal(projectPath('src/_gitignore_notes.c'), 'src/_gitignore_notes.c');
  });
});

describe('source globs', () => {
  test('* stays within a path part, **/ spans parts (or none)', () => {
    assert.ok(globToRegExp('src/**/*.c').test('src/main.c'));
    assert.ok(globToRegExp('src/**/*.c').test('src/a/b/tool.c'));
    assert.ok(!globToRegExp('*.c').test('src/main.c'));
    assert.ok(!globToRegExp('src/*.c').test('src/a/main.c'));
    assert.ok(globToRegExp('Cargo.toml').test('Cargo.toml'));
    assert.ok(!globToRegExp('Cargo.toml').test('Cargoxtoml'));
  });

  test('build outputs and dependency folders never count as sources', () => {
    const isSource = sourceMatcher(['**/*.rs', 'assembly/**/*.ts']);
    assert.ok(isSource('src/main.rs'));
    assert.ok(!isSource('target/release/build/x.rs'));
    assert.ok(!isSource('node_modules/x/assembly/index.ts'));
    assert.ok(!isSource('module.wasm'));
  });
});

describe('recipes', () => {
  test('a project is recognised by its files; Rust and AssemblyScript win over a stray .c', () => {
    assert.equal(detectRecipe(['src/main.c', 'subako-package.json'], '.').template, 'c');
    assert.equal(detectRecipe(['Cargo.toml', 'src/main.rs', 'helper.c'], '.').template, 'rust');
    assert.equal(detectRecipe(['assembly/index.ts', 'native.c'], '.').template, 'assemblyscript');
    assert.throws(() => detectRecipe(['README.md'], '/x'), { code: 'devkit.no_recipe' });
  });

  test('missing tools make one line: each tool named, each install command once', () => {
    const line = missingToolsMessage('c', [
      { tool: 'clang', install: 'apt-get install clang lld' },
      { tool: 'wasm-ld', install: 'apt-get install clang lld' },
    ]);
    assert.equal(line, 'the c build needs clang, wasm-ld, not found on this machine; install them with: apt-get install clang lld');
    assert.ok(!line.includes('\n'));
  });
});

describe('debounced rebuilds', () => {
  test('changes in quick succession make one run; a change during a run makes exactly one more', async () => {
    let runs = 0;
    let release!: () => void;
    const rebuild = debounced(10, async () => {
      runs += 1;
      if (runs === 1) await new Promise<void>((r) => (release = r));
    });
    rebuild.poke();
    rebuild.poke();
    rebuild.poke();
    while (runs === 0) await new Promise((r) => setTimeout(r, 5));
    rebuild.poke();
    rebuild.poke();
    await new Promise((r) => setTimeout(r, 40));
    assert.equal(runs, 1, 'nothing runs while a run is going');
    release();
    await rebuild.idle();
    assert.equal(runs, 2);
    rebuild.stop();
    rebuild.poke();
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(runs, 2, 'stopped: no more runs');
  });
});

describe('which Rust toolchain builds', () => {
  const rustup = { rustc: '/home/a/.cargo/bin/rustc', cargo: '/home/a/.cargo/bin/cargo', linker: true };
  const debian = { rustc: '/usr/bin/rustc', cargo: '/usr/bin/cargo', linker: true };

  test("rustup's, first on PATH with wasm32-wasip1 added, builds", () => {
    const search = chooseRustToolchain([{ ...rustup, target: 'wasm32-wasip1' }, { ...debian, target: 'wasm32-wasi' }], true);
    assert.deepEqual(search, { toolchain: { ...rustup, target: 'wasm32-wasip1' } });
  });

  test("rustup's without the target gives way to Debian's 1.63 with wasm32-wasi", () => {
    const search = chooseRustToolchain([{ ...rustup, target: null }, { ...debian, target: 'wasm32-wasi' }], true);
    assert.deepEqual(search, { toolchain: { ...debian, target: 'wasm32-wasi' } });
  });

  test("Debian's alone builds; rustup's alone with its target builds", () => {
    assert.deepEqual(chooseRustToolchain([{ ...debian, target: 'wasm32-wasi' }], true), { toolchain: { ...debian, target: 'wasm32-wasi' } });
    assert.deepEqual(chooseRustToolchain([{ ...rustup, target: 'wasm32-wasip1' }], true), { toolchain: { ...rustup, target: 'wasm32-wasip1' } });
  });

  test('a rustc with a target but no cargo to run it is passed over, and named as cargo missing', () => {
    assert.deepEqual(chooseRustToolchain([{ ...rustup, target: 'wasm32-wasip1', cargo: null }, { ...debian, target: 'wasm32-wasi' }], true),
      { toolchain: { ...debian, target: 'wasm32-wasi' } });
    assert.deepEqual(chooseRustToolchain([{ ...rustup, target: 'wasm32-wasip1', cargo: null }], false), { missing: { cargo: true, rustc: [] } });
  });

  test('when none can build, what each lacks is said, and the line names both ways to a toolchain', () => {
    assert.deepEqual(chooseRustToolchain([{ ...rustup, target: null }, { ...debian, target: null }], true),
      { missing: { cargo: false, rustc: [rustup.rustc, debian.rustc] } });
    assert.deepEqual(chooseRustToolchain([], false), { missing: { cargo: true, rustc: null } });
    const line = missingToolsMessage('rust', [{ tool: 'cargo', install: RUST_INSTALL }, { tool: 'rustc', install: RUST_INSTALL }]);
    assert.match(line, /rustup target add wasm32-wasip1/);
    assert.match(line, /apt-get install rustc cargo libstd-rust-dev-wasm32/);
  });
});
