/**
 * Compiling a module for the sandbox, once, on the main thread: rewrite its memory maximum to the cap
 * (wasm/instrument), compile, and note whether it imports `subako_http` so workers link it only then.
 */
import { SUBAKO_HTTP_MODULE } from '../wasi/preview1.js';
import { instrumentModule } from '../wasm/instrument.js';
import { SANDBOX_ERROR, SandboxError } from './errors.js';
import type { CompiledModule } from './types.js';

export interface CompileOptions {
  /** The memory cap, in bytes (rounded down to whole 64 KiB pages). */
  memoryBytes: number;
}

let lastModuleId = 0;

/**
 * Throws `MemoryCapError` (wasm/instrument, code `out_of_memory`) when the module's initial memory is
 * over the cap, `InstrumentError` when its memory cannot be capped (imported, shared, 64-bit, several),
 * and a SandboxError `sandbox.compile` when WebAssembly refuses the bytes.
 */
export async function compileModule(bytes: Uint8Array, options: CompileOptions): Promise<CompiledModule> {
  const instrumented = instrumentModule(bytes, { maxMemoryBytes: options.memoryBytes });
  let module: WebAssembly.Module;
  try {
    module = await WebAssembly.compile(instrumented as Uint8Array<ArrayBuffer>);
  } catch (error) {
    throw new SandboxError(
      SANDBOX_ERROR.compile,
      `WebAssembly cannot compile the module: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const importsHttp = WebAssembly.Module.imports(module).some((entry) => entry.module === SUBAKO_HTTP_MODULE);
  return Object.freeze({ id: ++lastModuleId, module, memoryBytes: options.memoryBytes, importsHttp });
}
