/**
 * common/'s face for what a host needs up to a fresh process's first answer — the shared leaves (config, settings)
 * as a host is made, the call's span — without what the index loads besides (the JSON Schema checker with its RE2
 * engine, the log's and the sealing's glue: every file of them is paid for by every fresh process that imports
 * it). The spans' OpenTelemetry API loads with the first span (trace.ts).
 */
export { isSystemError, systemErrorCode } from './system-error.js';
export { withoutUndefined } from './without-undefined.js';
export { jsonBytes } from './json-bytes.js';
export { subakoHome } from './data-home.js';
export { Secret } from './secret.js';
export { startSpan, inSpan, markFailed, SpanKind, type Traced } from './trace.js';
