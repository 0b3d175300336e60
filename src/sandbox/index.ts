/** sandbox/: run compiled modules in a pool of warm workers, within limits. */
export { SandboxPool, type SandboxPoolOptions } from './pool.js';
export { SandboxProcess, type SandboxProcessOptions } from './sandbox-process.js';
export { PreparedModuleCache } from './prepared-cache.js';
export { START_MARKS } from './start-marks.js';
export { tailText } from './stderr-tail.js';
export { SANDBOX_ERROR, SandboxError, MemoryCapError, InstrumentError } from './errors.js';
export {
  SUBAKO_HTTP_MODULE, SUBAKO_HTTP_SIGNATURES, HTTP_ABI_MISUSE, HTTP_ERROR_KINDS, httpErrorAnswer,
  type HttpErrorKind, type HttpErrorAnswer,
} from './subako-http-abi.js';
export type * from './types.js';
