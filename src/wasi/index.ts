/** The WASI preview 1 host, as the sandbox worker uses it, and the confined host operations on guest paths. */
export { WasiHost } from './host.js';
export { WasiSetupError, WASI_ERROR_CODES } from './errors.js';
export { MAX_DESCRIPTORS } from './descriptors.js';
export { MAX_SYMLINK_HOPS } from './resolver.js';
export { ENTRY_COST_BYTES, MAX_ENTRIES_PER_RUN } from './entry-budget.js';
export { ProcExit } from './types.js';
export type { PreopenSpec, StdinSource, WasiHostApi, WasiOptions, WriteBudget } from './types.js';
export {
  HostPathError, HOST_PATH_ERROR_CODE, HOST_PATH_PROBLEMS, MAX_HOST_PATH_BYTES,
  openFileForReading, openFileForWriting, readFileUnder, statFile, listDirectoryUnder,
  type DirectoryEntry, type HostPathProblem, type PathUnder, type WritableFile,
} from './host-files.js';
export { removeTree, MAX_EXTRA_PASSES, type RemoveTreeOptions, type TreeRemoval } from './remove-tree.js';
export {
  WASI_MODULE, PREVIEW1_SIGNATURES, type FuncSignature, type ValType,
} from './preview1.js';
