/**
 * The `subako_http` host module, ABI 1 (spec/function-abi.md), defined once: its imports and their
 * signatures, the misuse codes its imports return, and the error answers a guest reads back. The module
 * checks (package/module-rules.ts) accept exactly these imports, the sandbox links and implements them
 * (subako-http.ts), and egress/ answers with these kinds; none of them retypes a name, a code or a kind.
 *
 * It lives in sandbox/ because the sandbox is the room that provides the import to the guest, and every
 * other user (egress/, package/) sits above it; wasi/ is the preview 1 host and wasm/ knows no host ABI.
 */
import type { FuncSignature } from '../wasi/index.js';

export const SUBAKO_HTTP_MODULE = 'subako_http';

/** Both imports take a (ptr, len) range of guest memory and return an i32. */
export const SUBAKO_HTTP_SIGNATURES = Object.freeze({
  /** `request(ptr, len) -> len`: reads the request JSON, does it, holds the answer, returns its length. */
  request: { params: ['i32', 'i32'], results: ['i32'] },
  /** `read_response(ptr, len) -> 0`: copies the held answer to `ptr` (`len` as `request` returned) and forgets it. */
  read_response: { params: ['i32', 'i32'], results: ['i32'] },
} as const satisfies Record<string, FuncSignature>);

export type SubakoHttpFunction = keyof typeof SUBAKO_HTTP_SIGNATURES;

/** Negative returns of the imports: misuses of the ABI, numbered as the page numbers them. */
export const HTTP_ABI_MISUSE = Object.freeze({
  /** A pointer/length range outside the module's memory. */
  outOfRange: -1,
  /** `read_response` called with no answer held. */
  nothingHeld: -2,
  /** `read_response` called with a length other than the one `request` returned. */
  lengthMismatch: -3,
});

/** The thirteen kinds of `{"error":{"kind","message"}}` answers, as the page lists them. */
export const HTTP_ERROR_KINDS = [
  'invalid_request',
  'host_not_allowed',
  'forbidden_destination',
  'credential_header',
  'credential_unavailable',
  'too_many_redirects',
  'timeout',
  'too_large',
  'not_text',
  'write_budget',
  'bad_path',
  'connection',
  'abi',
] as const;

export type HttpErrorKind = (typeof HTTP_ERROR_KINDS)[number];

export interface HttpErrorAnswer {
  error: { kind: HttpErrorKind; message: string };
}

export function httpErrorAnswer(kind: HttpErrorKind, message: string): HttpErrorAnswer {
  return { error: { kind, message } };
}

/** What a run without network access (no `http` handler) reads back from every request. */
export const NO_NETWORK_REPLY = JSON.stringify(httpErrorAnswer('host_not_allowed', 'this run has no network access'));
