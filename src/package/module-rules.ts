/**
 * The ABI 1 rules for a module, built from the tables the host also implements: preview 1
 * (src/wasi/preview1.ts) and subako_http (src/sandbox/subako-http-abi.ts), so the checker and the host can
 * never disagree.
 */
import { PREVIEW1_SIGNATURES, WASI_MODULE } from '../wasi/index.js';
import { SUBAKO_HTTP_MODULE, SUBAKO_HTTP_SIGNATURES } from '../sandbox/index.js';
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
