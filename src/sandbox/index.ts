/** sandbox/: run compiled modules in a pool of warm workers, within limits. */
export { SandboxPool, type SandboxPoolOptions } from './pool.js';
export { SandboxProcess, type SandboxProcessOptions } from './sandbox-process.js';
export { SANDBOX_ERROR, SandboxError, MemoryCapError, InstrumentError } from './errors.js';
export { HTTP_ABI_MISUSE, NO_NETWORK_REPLY } from './subako-http.js';
export type * from './types.js';
