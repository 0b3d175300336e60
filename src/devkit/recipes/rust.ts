/**
 * The Rust recipe: Debian's cargo and rustc (1.63, target `wasm32-wasi`) against the SDK crate
 * (`sdk/rust`, a path dependency), with serde and serde_json from Debian's packaged crates (the project's
 * `.cargo/config.toml` replaces crates.io with `/usr/share/cargo/registry`). The tools are called by their
 * absolute paths: rustup's newer cargo, first on PATH on many machines, has no wasm32-wasi standard library
 * here. The template names its binary `module`, so the build always lands at one path, which the second
 * command copies to `module.wasm`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BuildCommand, BuildRecipe, MissingTool, SdkPaths } from '../recipe.js';

/** Debian's packages for everything the build needs; one line, whichever part is missing. */
export const RUST_INSTALL = 'apt-get install rustc cargo libstd-rust-dev-wasm32 lld librust-serde-json-dev librust-serde-derive-dev';

export const CARGO = '/usr/bin/cargo';
export const RUSTC = '/usr/bin/rustc';
/** Debian's rustc links wasm through this name, a link to lld's binary (the `lld` package). */
export const RUST_LLD = '/usr/bin/rust-lld';
/** Where Debian unpacks the crates its `librust-*-dev` packages hold. */
export const DEBIAN_CRATES = '/usr/share/cargo/registry';
export const RUST_TARGET = 'wasm32-wasi';
/** The crates the SDK itself needs (their own dependencies come with their Debian packages). */
const SDK_CRATES = ['serde', 'serde_json'];

/** Not Cargo.lock: the first build writes it, and watching it would rebuild once for nothing. */
export const RUST_SOURCE_GLOBS: readonly string[] = ['src/**/*.rs', 'Cargo.toml', '.cargo/config.toml', 'build.rs'];

/** `<dir>/target`: the project's own build folder, whatever CARGO_TARGET_DIR the caller's shell sets. */
export const cargoTargetDir = (dir: string): string => join(dir, 'target');

/** Where cargo writes the template's binary (named `module` in its Cargo.toml). Pure. */
export const builtModulePath = (dir: string): string => join(cargoTargetDir(dir), RUST_TARGET, 'release', 'module.wasm');

/**
 * Copies the built module with the running Node itself, so the build needs no `cp` (argv: from, to). A
 * project whose binary is not named `module` built something else: say so in one line.
 */
const COPY_MODULE = [
  'const fs = require("node:fs");',
  'const [from, to] = process.argv.slice(1);',
  'if (!fs.existsSync(from)) {',
  '  console.error(`cargo built no ${from}: name the binary "module" in Cargo.toml ([[bin]] name = "module", path = "src/main.rs")`);',
  '  process.exit(1);',
  '}',
  'fs.copyFileSync(from, to);',
].join('\n');

/** The two commands, pure on the project's folder. */
export function rustCommands(dir: string): BuildCommand[] {
  return [
    {
      program: CARGO,
      args: ['build', '--release', '--target', RUST_TARGET],
      env: { RUSTC, CARGO_TARGET_DIR: cargoTargetDir(dir) },
    },
    { program: process.execPath, args: ['-e', COPY_MODULE, builtModulePath(dir), join(dir, 'module.wasm')] },
  ];
}

/** The folder of rustc's wasm32-wasi standard library, from rustc's own sysroot (Debian's is /usr). */
function wasmStdFound(): boolean {
  const run = spawnSync(RUSTC, ['--print', 'sysroot'], { encoding: 'utf8' });
  const sysroot = run.status === 0 ? run.stdout.trim() : '/usr';
  const lib = join(sysroot, 'lib', 'rustlib', RUST_TARGET, 'lib');
  try {
    return readdirSync(lib).some((name) => name.startsWith('libstd-') && name.endsWith('.rlib'));
  } catch {
    return false; // no such folder: the target's standard library is not installed
  }
}

/** Crates in Debian's registry folder, by name (each unpacked as `<name>-<version>`). */
function cratesFound(): Set<string> {
  try {
    return new Set(readdirSync(DEBIAN_CRATES).map((entry) => entry.replace(/-[0-9].*$/, '')));
  } catch {
    return new Set(); // no registry folder: no crate is installed
  }
}

export const rustRecipe: BuildRecipe = {
  template: 'rust',

  detect(fileNames) {
    return fileNames.includes('Cargo.toml');
  },

  missingTools(_dir: string, sdk: SdkPaths): MissingTool[] {
    const missing: MissingTool[] = [];
    if (!existsSync(CARGO)) missing.push({ tool: `cargo (${CARGO})`, install: RUST_INSTALL });
    const rustc = existsSync(RUSTC);
    if (!rustc) missing.push({ tool: `rustc (${RUSTC})`, install: RUST_INSTALL });
    if (rustc && !wasmStdFound()) missing.push({ tool: `the ${RUST_TARGET} standard library for rustc`, install: RUST_INSTALL });
    // existsSync follows the link: Debian's rust-lld dangles until lld is installed.
    if (rustc && !existsSync(RUST_LLD)) missing.push({ tool: `rust-lld (the lld package)`, install: RUST_INSTALL });
    const crates = cratesFound();
    for (const crate of SDK_CRATES) {
      if (!crates.has(crate)) missing.push({ tool: `the ${crate} crate (in ${DEBIAN_CRATES})`, install: RUST_INSTALL });
    }
    if (!existsSync(join(sdk.sdkDir, 'Cargo.toml'))) {
      missing.push({ tool: `the subako crate (not in ${sdk.sdkDir})`, install: 'npm install subako (this installation of subako lacks its sdk/ folder)' });
    }
    return missing;
  },

  commands(dir: string): BuildCommand[] {
    return rustCommands(dir);
  },

  sourceGlobs: RUST_SOURCE_GLOBS,
};
