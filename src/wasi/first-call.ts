/**
 * wasi/'s face for what a host needs up to a fresh process's first answer, outside a sandbox worker: to read a
 * guest's end (`ProcExit`), and to reach a file under a guest's volume confined as the guest would be
 * (host-files.ts); without the WASI host behind the index (two dozen files that only a worker runs).
 */
export { ProcExit } from './types.js';
export {
  HostPathError, MAX_HOST_PATH_BYTES, readFileUnder, statFile, type HostPathProblem, type PathUnder,
} from './host-files.js';
