/**
 * The ABI 1 rules for a module, built from the one table of preview 1 signatures the host also
 * implements (src/wasi/preview1.ts), so the checker and the host can never disagree.
 */
import { PREVIEW1_SIGNATURES, SUBAKO_HTTP_MODULE, SUBAKO_HTTP_SIGNATURES, WASI_MODULE } from '../wasi/index.js';
import { checkModule, FORMAT_ONLY_RULES, type ModuleCheck, type ModuleRules } from '../wasm/index.js';

/** A function package: a WASI command exporting `_start` and `memory`, importing only what Subako provides. */
export const FUNCTION_MODULE_RULES: ModuleRules = Object.freeze({
  imports: Object.freeze({
    [WASI_MODULE]: PREVIEW1_SIGNATURES,
    [SUBAKO_HTTP_MODULE]: SUBAKO_HTTP_SIGNATURES,
  }),
  requireFunctionExports: true,
});

/** A plain WASI command run by `subako wasi`: only the format and feature checks. */
export const WASI_COMMAND_RULES: ModuleRules = FORMAT_ONLY_RULES;

export function checkFunctionModule(bytes: Uint8Array): ModuleCheck {
  return checkModule(bytes, FUNCTION_MODULE_RULES);
}
