/**
 * The global the rewrite appends and exports (instrument.ts): 1 once a `memory.grow` failed, so the host can
 * tell "ran out of memory" from any other trap. In a file of its own because a sandbox worker reads it as it
 * starts, and the room's index would load the whole parser with it.
 */
export const GROW_FAILED_EXPORT = '__subako_grow_failed';
