/**
 * The egress error family. Every refusal or failure of a `subako_http` request is an EgressError whose
 * `kind` is one of the thirteen kinds of the ABI page; the guest receives it as
 * `{"error":{"kind","message"}}`. Messages are built only from safe data (kinds, host names, status codes,
 * error codes) and never from credential values or raw library messages.
 */
import { SubakoError } from '../errors.js';

export const EGRESS_ERROR_KINDS = [
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

export type EgressErrorKind = (typeof EGRESS_ERROR_KINDS)[number];

/**
 * The `abi` kind belongs to the sandbox's import glue (misuse codes -1/-2/-3 are returned by the import
 * itself). It is exposed here so that glue, if it must put a misuse into an answer, uses the same word.
 */
export const ABI_ERROR_KIND: EgressErrorKind = 'abi';

/** The negative results of the `subako_http` imports, as the ABI page names them (returned by the sandbox). */
export const ABI_MISUSE = Object.freeze({
  /** A pointer/length range outside the module's memory. */
  outOfRange: -1,
  /** `read_response` called with no answer held. */
  nothingHeld: -2,
  /** `read_response` called with a length other than the one `request` returned. */
  lengthMismatch: -3,
});

export class EgressError extends SubakoError {
  readonly kind: EgressErrorKind;

  constructor(kind: EgressErrorKind, message: string) {
    super(`egress.${kind}`, message);
    this.kind = kind;
  }
}

export function isEgressError(value: unknown): value is EgressError {
  return value instanceof EgressError;
}
