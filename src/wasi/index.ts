/** The WASI preview 1 host, as the sandbox worker uses it. */
export { WasiHost } from './host.js';
export { WasiSetupError, WASI_ERROR_CODES } from './errors.js';
export { MAX_DESCRIPTORS } from './descriptors.js';
export { MAX_SYMLINK_HOPS } from './resolver.js';
export { ENTRY_COST_BYTES, MAX_ENTRIES_PER_RUN } from './entry-budget.js';
export { ProcExit } from './types.js';
export type { PreopenSpec, StdinSource, WasiHostApi, WasiOptions, WriteBudget } from './types.js';
