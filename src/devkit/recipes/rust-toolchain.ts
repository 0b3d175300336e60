/**
 * Which Rust toolchain builds a package: the first rustc on PATH that has a WASI preview 1 standard library,
 * with the cargo beside it. Machines often hold two: Debian's (1.63, `/usr/bin`, whose wasm32 library is
 * `libstd-rust-dev-wasm32`) and rustup's (`~/.cargo/bin`, first on PATH, which has no wasm32 target until
 * `rustup target add wasm32-wasip1`). The first that can build wins, whichever it is; one that cannot is
 * passed over, so rustup's being first on PATH does not break a build Debian's can do.
 *
 * `RUSTC` and `CARGO`, when set, name the programs instead (cargo honours `RUSTC` itself; `CARGO` is what
 * cargo sets for the tools it runs): the search is then that rustc alone.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { allOnPath, onPath, programNamed } from './on-path.js';

/**
 * The target names of WASI preview 1, newest first: rustc 1.78 added `wasm32-wasip1` and 1.84 removed
 * `wasm32-wasi`, which is all Debian's 1.63 knows.
 */
export const RUST_WASM_TARGETS = ['wasm32-wasip1', 'wasm32-wasi'] as const;
export type RustWasmTarget = (typeof RUST_WASM_TARGETS)[number];

export interface RustToolchain {
  cargo: string;
  rustc: string;
  /** The WASI preview 1 target this rustc has a standard library for. */
  target: RustWasmTarget;
  /** Whether rustc's wasm linker, rust-lld, is there (in the sysroot, or on PATH for Debian's). */
  linker: boolean;
}

/** What the search found: a toolchain that can build, or what is missing (rustc, cargo, the wasm32 library). */
export type RustSearch =
  | { toolchain: RustToolchain }
  | { missing: { cargo: boolean; rustc: string[] | null } };

interface RustcFacts {
  target: RustWasmTarget | null;
  linker: boolean;
}

function rustcFacts(rustc: string, path: string | undefined): RustcFacts {
  const run = spawnSync(rustc, ['--print', 'sysroot'], { encoding: 'utf8' });
  if (run.status !== 0) return { target: null, linker: false };
  const rustlib = join(run.stdout.trim(), 'lib', 'rustlib');
  const hasStd = (target: string): boolean => {
    try {
      return readdirSync(join(rustlib, target, 'lib')).some((name) => name.startsWith('libstd-') && name.endsWith('.rlib'));
    } catch {
      return false; // no such folder: this target's standard library is not installed
    }
  };
  let hosts: string[];
  try {
    hosts = readdirSync(rustlib);
  } catch {
    hosts = []; // no rustlib folder: no target at all
  }
  // rustup ships rust-lld in the sysroot; Debian's rustc calls /usr/bin/rust-lld, a link to lld that
  // dangles until the lld package is installed (existsSync follows it).
  const linker = hosts.some((host) => existsSync(join(rustlib, host, 'bin', 'rust-lld'))) || onPath('rust-lld', path) !== null;
  return { target: RUST_WASM_TARGETS.find(hasStd) ?? null, linker };
}

/** The cargo to run with `rustc`: `CARGO` when set, else the one in rustc's folder, else the first on PATH. */
function cargoFor(rustc: string, env: NodeJS.ProcessEnv): string | null {
  if (env.CARGO) return programNamed(env.CARGO, env.PATH);
  return programNamed(join(dirname(rustc), 'cargo'), env.PATH) ?? onPath('cargo', env.PATH);
}

/** One rustc the search looked at, with what it has: its WASI target (or none), its linker, its cargo. */
export interface RustcFound {
  rustc: string;
  target: RustWasmTarget | null;
  linker: boolean;
  cargo: string | null;
}

/**
 * The choice, pure on what was found (in PATH's order, or the one `RUSTC` names): the first rustc that has a
 * WASI standard library and a cargo to run it with. `anyCargo` is whether a cargo is there at all, to tell
 * "install cargo" from "install the wasm32 library".
 */
export function chooseRustToolchain(found: readonly RustcFound[], anyCargo: boolean): RustSearch {
  const withoutStd: string[] = [];
  let cargoMissing = false;
  for (const { rustc, target, linker, cargo } of found) {
    if (target === null) withoutStd.push(rustc);
    else if (cargo === null) cargoMissing = true;
    else return { toolchain: { cargo, rustc, target, linker } };
  }
  return { missing: { cargo: cargoMissing || !anyCargo, rustc: found.length === 0 ? null : withoutStd } };
}

const kept = new Map<string, RustToolchain>();

/**
 * Searches as described above. A toolchain found is kept for the process (the search runs rustc once per
 * candidate); a miss is not, so installing the missing part is seen by the next build.
 */
export function findRustToolchain(env: NodeJS.ProcessEnv = process.env): RustSearch {
  const key = [env.PATH, env.RUSTC, env.CARGO].join('\0');
  const toolchain = kept.get(key);
  if (toolchain) return { toolchain };
  const named = env.RUSTC ? programNamed(env.RUSTC, env.PATH) : null;
  const candidates = env.RUSTC ? (named ? [named] : []) : allOnPath('rustc', env.PATH);
  const found: RustcFound[] = [];
  for (const rustc of candidates) {
    const facts = rustcFacts(rustc, env.PATH);
    found.push({ rustc, ...facts, cargo: facts.target === null ? null : cargoFor(rustc, env) });
    if (facts.target !== null && found[found.length - 1].cargo !== null) break; // the rest cannot change the choice
  }
  const anyCargo = env.CARGO ? programNamed(env.CARGO, env.PATH) !== null : onPath('cargo', env.PATH) !== null;
  const search = chooseRustToolchain(found, anyCargo);
  if ('toolchain' in search) kept.set(key, search.toolchain);
  return search;
}
