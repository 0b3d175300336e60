/** The errors of common/'s pieces; mcp/ re-exports them under the names it always had. */
import { ReasonedError, SubakoError } from '../errors.js';

export const SEAL_ERROR = 'seal_error';

/** A sealed value could not be opened (wrong key, tampered, not ours) or the sealing key is unusable. */
export type SealErrorReason = 'bad_key' | 'key_permissions' | 'tampered' | 'format';

export class SealError extends ReasonedError<SealErrorReason> {
  constructor(reason: SealErrorReason, message: string, options?: { cause?: unknown }) {
    super(SEAL_ERROR, reason, message, options);
  }
}

/** A JSON Schema that cannot be compiled (unknown `$ref`, invalid keyword value, unsupported dialect). */
export class InvalidSchemaError extends SubakoError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_schema', message, options);
  }
}
