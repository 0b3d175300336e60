/**
 * The Rust recipe: cargo and rustc for WASI preview 1 (rustup's with `wasm32-wasip1`, or Debian's 1.63 with
 * `wasm32-wasi`, whichever comes first on PATH with its target installed), found by rust-toolchain.ts, against the SDK crate (`sdk/rust`, a path
 * dependency), with serde and serde_json from Debian's packaged crates (the project's `.cargo/config.toml`
 * replaces crates.io with `/usr/share/cargo/registry`). The template names its binary `module`, so the build
 * always lands at one path, which the second command copies to `module.wasm`.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { MODULE_FILE } from '../../package/index.js';
import type { BuildCommand, BuildRecipe, MissingTool, SdkPaths } from '../recipe.js';
import { findRustToolchain, type RustToolchain, type RustWasmTarget } from './rust-toolchain.js';

/**
 * The two ways to a Rust toolchain for WASI preview 1, in one line whichever part is missing: rustup's (its
 * cargo on PATH, with the target added) or Debian's packaged one (1.63, target `wasm32-wasi`).
 */
export const RUST_INSTALL = "rustup target add wasm32-wasip1 (rustup's toolchain, https://rustup.rs), " +
  "or apt-get install rustc cargo libstd-rust-dev-wasm32 lld (Debian's)";
/** Debian's wasm linker: its rustc calls /usr/bin/rust-lld, a link into the lld package (rustup ships its own). */
export const RUST_LINKER_INSTALL = 'apt-get install lld';
/** The SDK's crates, which the template's .cargo/config.toml takes from Debian's packages, whichever rustc builds. */
export const RUST_CRATES_INSTALL = 'apt-get install librust-serde-json-dev librust-serde-derive-dev';

/** Where Debian unpacks the crates its `librust-*-dev` packages hold. */
export const DEBIAN_CRATES = '/usr/share/cargo/registry';
/** The crates the SDK itself needs (their own dependencies come with their Debian packages). */
const SDK_CRATES = ['serde', 'serde_json'];

/** Not Cargo.lock: the first build writes it, and watching it would rebuild once for nothing. */
export const RUST_SOURCE_GLOBS: readonly string[] = ['src/**/*.rs', 'Cargo.toml', '.cargo/config.toml', 'build.rs'];

/** `<dir>/target`: the project's own build folder, whatever CARGO_TARGET_DIR the caller's shell sets. */
export const cargoTargetDir = (dir: string): string => join(dir, 'target');

/** Where cargo writes the template's binary (named `module` in its Cargo.toml). Pure. */
export const builtModulePath = (dir: string, target: RustWasmTarget): string => join(cargoTargetDir(dir), target, 'release', 'module.wasm');

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

/**
 * The two commands, pure on the project's folder and the toolchain. `RUSTC` makes cargo run the rustc that
 * was chosen with it, and `--target` overrides the template's `build.target` (Debian's name) for a newer one.
 */
export function rustCommands(dir: string, toolchain: RustToolchain, output = MODULE_FILE): BuildCommand[] {
  return [
    {
      program: toolchain.cargo,
      args: ['build', '--release', '--target', toolchain.target],
      env: { RUSTC: toolchain.rustc, CARGO_TARGET_DIR: cargoTargetDir(dir) },
    },
    { program: process.execPath, args: ['-e', COPY_MODULE, builtModulePath(dir, toolchain.target), join(dir, output)] },
  ];
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
    const search = findRustToolchain();
    if ('missing' in search) {
      const { cargo, rustc } = search.missing;
      if (cargo) missing.push({ tool: 'cargo', install: RUST_INSTALL });
      if (rustc === null) missing.push({ tool: 'rustc', install: RUST_INSTALL });
      else if (rustc.length > 0) {
        missing.push({ tool: `a WASI standard library for rustc (wasm32-wasip1 or wasm32-wasi; ${rustc.join(', ')} has none)`, install: RUST_INSTALL });
      }
    } else if (!search.toolchain.linker) {
      missing.push({ tool: 'rust-lld (the lld package)', install: RUST_LINKER_INSTALL });
    }
    const crates = cratesFound();
    for (const crate of SDK_CRATES) {
      if (!crates.has(crate)) missing.push({ tool: `the ${crate} crate (in ${DEBIAN_CRATES})`, install: RUST_CRATES_INSTALL });
    }
    if (!existsSync(join(sdk.sdkDir, 'Cargo.toml'))) {
      missing.push({ tool: `the subako crate (not in ${sdk.sdkDir})`, install: 'npm install subako (this installation of subako lacks its sdk/ folder)' });
    }
    return missing;
  },

  commands(dir: string, _sdk: SdkPaths, output?: string): BuildCommand[] {
    const search = findRustToolchain();
    return 'toolchain' in search ? rustCommands(dir, search.toolchain, output) : []; // missingTools says what to install
  },

  sourceGlobs: RUST_SOURCE_GLOBS,
};
