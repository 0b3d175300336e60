/**
 * The egress error family. Every refusal or failure of a `subako_http` request is an EgressError whose
 * `kind` is one of the kinds of the ABI (sandbox/subako-http-abi.ts); the guest receives it as
 * `{"error":{"kind","message"}}`. Messages are built only from safe data (kinds, host names, status codes,
 * error codes) and never from credential values or raw library messages.
 */
import { SubakoError } from '../errors.js';
import type { HttpErrorKind } from '../sandbox/index.js';

export class EgressError extends SubakoError {
  readonly kind: HttpErrorKind;

  constructor(kind: HttpErrorKind, message: string) {
    super(`egress.${kind}`, message);
    this.kind = kind;
  }
}

