/**
 * Instrumented bytes kept on disk, by the digest of the module's own bytes and everything instrumentation
 * depends on (the memory cap, the module limits, subako's version). Instrumenting walks every instruction
 * in JavaScript, and in a fresh process that walk runs before V8 has optimised it: a server that restarts,
 * or a CLI run, would pay it again for every package. With the cache, a module is instrumented once; later
 * loads read the result back.
 *
 * The directory is the host's own (the platform's data directory): whoever can write it can already change
 * the platform's records, so the bytes read back are trusted as ours. Entries are written to a temporary
 * name and renamed, so a reader never sees half a file. A cache that cannot be read or written only costs
 * the walk: it never fails a compile.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MODULE_LIMITS } from '../wasm/first-call.js';
import { SUBAKO_VERSION } from '../version.js';
import { prepareModule, type PreparedModule } from './compile.js';
import type { CompileOptions } from './types.js';

const sha256 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

export class PreparedModuleCache {
  private made = false;

  constructor(readonly dir: string) {}

  /** The instrumented bytes for `bytes` under `options`: from the cache, or instrumented now and kept. */
  async prepare(bytes: Uint8Array, options: CompileOptions): Promise<PreparedModule> {
    const recipe = sha256(JSON.stringify({ version: SUBAKO_VERSION, memoryBytes: options.memoryBytes, limits: options.limits ?? MODULE_LIMITS }));
    const path = join(this.dir, `${options.digest ?? sha256(bytes)}-${recipe.slice(0, 16)}.wasm`);
    try {
      const cached = readFileSync(path);
      return { bytes: new Uint8Array(cached.buffer, cached.byteOffset, cached.byteLength) as Uint8Array<ArrayBuffer>, memoryBytes: options.memoryBytes };
    } catch {
      // expected: not cached yet (ENOENT); any other failure to read is the same as a miss
    }
    // Refusals (a memory over the cap, limits exceeded) are thrown here and never cached.
    const prepared = await prepareModule(bytes, options);
    try {
      if (!this.made) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.made = true;
      const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      writeFileSync(temporary, prepared.bytes, { mode: 0o600 });
      renameSync(temporary, path);
    } catch {
      // expected on a read-only or full disk: the module is instrumented again next time, nothing worse
    }
    return prepared;
  }
}

/** Instrument through the cache when there is one. */
export function prepareWith(cache: PreparedModuleCache | undefined, bytes: Uint8Array, options: CompileOptions): Promise<PreparedModule> {
  return cache ? cache.prepare(bytes, options) : prepareModule(bytes, options);
}
