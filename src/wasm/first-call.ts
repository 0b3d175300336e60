/**
 * wasm/'s face for what a host and its sandbox process need up to a fresh process's first answer — the module caps,
 * whether a module has a start function, the rewrite's refusals — without the parser and the rewrite behind the
 * index (about twenty files, loaded only when a module is checked or instrumented: sandbox/compile.ts).
 */
export { MODULE_LIMITS, type ModuleLimits } from './module-limits.js';
export { hasStartSection } from './start-section.js';
export { InstrumentError, MemoryCapError } from './instrument-errors.js';
