/** Test helpers: packages made of the committed guests, with asset directories written per test. */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fixture, REPO_ROOT } from '../helpers/paths.js';
import { after, before } from 'node:test';
import { FunctionHost, type FunctionHostOptions } from '../../src/function/host.js';
import type { PackageSource } from '../../src/function/types.js';

export const ABI_PROBE = readFileSync(fixture('c', 'mcp', 'abi_probe.wasm'));
export const GREET = readFileSync(join(REPO_ROOT, 'examples', 'packages', 'greet', 'module.wasm'));

/** A scratch directory removed by `cleanup()`. */
export class Scratch {
  readonly root = mkdtempSync(join(tmpdir(), 'subako-fn-'));
  private n = 0;

  dir(name = 'd'): string {
    const path = join(this.root, `${name}-${(this.n += 1)}`);
    mkdirSync(path, { recursive: true });
    return path;
  }

  /** Writes files (relative path -> content) under a new directory and returns it. */
  files(files: Record<string, string | Uint8Array>): string {
    const dir = this.dir('files');
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
    return dir;
  }

  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

export function probe(assetsDir: string | null = null, name = 'probe'): PackageSource {
  return { name, version: '1.0.0', moduleBytes: ABI_PROBE, assetsDir };
}

/** A FunctionHost and a Scratch folder for one test file: made before its first test, closed and removed after its last. */
export function hostPerFile(options: FunctionHostOptions = {}): { readonly host: FunctionHost; readonly scratch: Scratch } {
  const made = {} as { host: FunctionHost; scratch: Scratch };
  before(() => {
    made.host = new FunctionHost(options);
    made.scratch = new Scratch();
  });
  after(async () => {
    await made.host.close();
    made.scratch.cleanup();
  });
  return made;
}
