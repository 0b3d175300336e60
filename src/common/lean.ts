/**
 * common/'s lean face: what a sandbox worker needs as it starts, without what the index loads besides
 * (OpenTelemetry's API, the log's and the schemas' glue): every worker pays its imports on a fresh process's
 * first call, and this one costs nothing.
 */
export { isSystemError } from './system-error.js';
export { takeRandomBytes } from './random-pool.js';
