/**
 * The error family. Every error subako raises on purpose is a SubakoError with a stable `code`
 * that callers and tests match on; the message names what was refused and what would be accepted.
 */
export class SubakoError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }

  toJSON(): { code: string; message: string } {
    return { code: this.code, message: this.message };
  }
}

/**
 * A SubakoError whose `code` names the family (`mcp.auth_error`) and whose `reason` says which way it failed
 * (`expired`), so callers match on either without parsing messages.
 */
export class ReasonedError<R extends string> extends SubakoError {
  readonly reason: R;

  constructor(code: string, reason: R, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.reason = reason;
  }

  override toJSON(): { code: string; message: string; reason: R } {
    return { code: this.code, message: this.message, reason: this.reason };
  }
}

/** A problem found while checking something (a module, a manifest, a tool list): data, not a throw. */
export interface Problem {
  code: string;
  message: string;
}

/** Raised when input from a person or a client is not acceptable; carries every problem found. */
export class ValidationError extends SubakoError {
  readonly problems: Problem[];

  constructor(problems: Problem[], summary?: string) {
    super(problems[0]?.code ?? 'invalid', summary ?? problems.map((p) => p.message).join('; '));
    this.problems = problems;
  }
}

/** A usage error of the CLI or the library (bad flags, malformed JSON arguments). */
export class UsageError extends SubakoError {
  constructor(message: string) {
    super('usage', message);
  }
}
