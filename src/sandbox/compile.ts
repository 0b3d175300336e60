/**
 * Compiling a module for the sandbox, in two steps that may run in different processes:
 * `prepareModule` rewrites its caps into the bytes (wasm/instrument: pure, typed errors, done where the
 * caller is), and `compilePrepared` compiles those bytes where the guest will run and notes whether the
 * module imports `subako_http`, so workers link it only then.
 */
import { SUBAKO_HTTP_MODULE } from './subako-http-abi.js';
import { hasStartSection } from '../wasm/first-call.js';
import { SANDBOX_ERROR, SandboxError } from './errors.js';
import type { CompiledModule, CompileOptions } from './types.js';

export type { CompileOptions } from './types.js';

/** Bytes with the caps written in, ready to compile. */
export interface PreparedModule {
  readonly bytes: Uint8Array<ArrayBuffer>;
  readonly memoryBytes: number;
}

let lastModuleId = 0;

/**
 * The rewrite (wasm/'s parser and instrumentation, about twenty files), loaded by the first module instrumented
 * here: a process that never instruments — the sandbox process, which only compiles; a host whose modules all
 * come from the prepared cache — never loads it, and a fresh process's first call does not wait for it.
 */
let rewrite: Promise<typeof import('../wasm/index.js')> | null = null;

/** A module id unique in this process (a sandbox process's modules take their ids from its parent). */
export function nextModuleId(): number {
  return ++lastModuleId;
}

/**
 * Rejects with `MemoryCapError` (wasm/instrument, code `out_of_memory`) when the module's initial memory is
 * over the cap, `InstrumentError` when its memory cannot be capped (imported, shared, 64-bit, several), and
 * `ModuleLimitError` (`limit.*`) when it declares more than a cap allows; every table's maximum is lowered
 * to the table cap, so `table.grow` past it fails.
 */
export async function prepareModule(bytes: Uint8Array, options: CompileOptions): Promise<PreparedModule> {
  const { instrumentModule } = await (rewrite ??= import('../wasm/index.js'));
  const instrumented = instrumentModule(bytes, { maxMemoryBytes: options.memoryBytes, limits: options.limits });
  return { bytes: instrumented, memoryBytes: options.memoryBytes };
}

/** Throws a SandboxError `sandbox.compile` when WebAssembly refuses the bytes. */
export async function compilePrepared(prepared: PreparedModule, id = nextModuleId()): Promise<CompiledModule> {
  let module: WebAssembly.Module;
  try {
    module = await WebAssembly.compile(prepared.bytes);
  } catch (error) {
    throw new SandboxError(
      SANDBOX_ERROR.compile,
      `WebAssembly cannot compile the module: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const importsHttp = WebAssembly.Module.imports(module).some((entry) => entry.module === SUBAKO_HTTP_MODULE);
  // Linked per run (the bridge) or running code as it instantiates: such a module is instantiated in its run only.
  const premade = !importsHttp && !hasStartSection(prepared.bytes);
  return Object.freeze({ id, module, memoryBytes: prepared.memoryBytes, importsHttp, premade });
}
