/**
 * wasm/'s lean face: the one name a sandbox worker reads as it starts (the global the rewrite exports), without
 * the parser and the rewrite behind the index.
 */
export { GROW_FAILED_EXPORT } from './grow-failed.js';
