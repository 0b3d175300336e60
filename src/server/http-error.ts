/**
 * HTTP errors and the one mapping from the platform's typed errors to status codes. Everything a caller did
 * wrong is a 4xx with `{"error": {"code", "message"}}`; only our own failures are 5xx, and their messages
 * are not shown (they may carry paths or internals).
 */
import { SubakoError, ValidationError } from '../errors.js';
import { CallCancelledError } from '../tool.js';
import { BLOB_ERRORS, BlobError, BundleError } from '../package/index.js';
import {
  ConflictError, InUseError, NotFoundError, UpstreamError, CallRefusedError, StoreUnavailableError, CallKeyInvalidError, CallKeyReusedError,
  CallKeyInProgressError, CallNotStartedError,
} from '../platform/index.js';

export class HttpError extends SubakoError {
  constructor(
    readonly status: number, code: string, message: string, readonly problems?: { code: string; message: string }[],
    /** Headers the answer carries (a 401's WWW-Authenticate). */
    readonly headers?: Record<string, string>,
  ) {
    super(code, message);
  }
}

export interface ErrorBody {
  error: {
    code: string;
    message: string;
    problems?: { code: string; message: string }[];
    /** On 429: which limit refused the call (`session` or `agent`), and when to try again. */
    limit?: string;
    retry_after_ms?: number;
  };
}

export interface MappedError {
  status: number;
  body: ErrorBody;
  internal: boolean;
  /** Headers the answer carries (Retry-After on 429, Connection: close on 413). */
  headers?: Record<string, string>;
}

export function toHttpError(err: unknown): MappedError {
  const mapped = statusOf(err);
  if (err instanceof HttpError && err.headers) return { ...mapped, headers: err.headers };
  if (mapped.status === 413) return { ...mapped, headers: { connection: 'close' } };
  if (err instanceof CallRefusedError || err instanceof CallKeyInProgressError || err instanceof CallNotStartedError) {
    return { ...mapped, headers: { 'retry-after': String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))) } };
  }
  if (mapped.status === 503) return { ...mapped, headers: { 'retry-after': '1' } };
  return mapped;
}

function statusOf(err: unknown): MappedError {
  if (err instanceof HttpError) return { status: err.status, body: errorBody(err.code, err.message, err.problems), internal: false };
  if (err instanceof CallRefusedError) {
    return { status: 429, body: { error: { code: err.code, message: err.message, limit: err.limit, retry_after_ms: err.retryAfterMs } }, internal: false };
  }
  // A call refused before it ran, for its idempotency key or the database: each its own status.
  if (err instanceof CallKeyInvalidError) return { status: 400, body: errorBody(err.code, err.message), internal: false };
  if (err instanceof CallKeyReusedError) return { status: 422, body: errorBody(err.code, err.message), internal: false };
  if (err instanceof CallKeyInProgressError) return { status: 409, body: errorBody(err.code, err.message), internal: false };
  if (err instanceof CallNotStartedError) return { status: 503, body: errorBody(err.code, err.message), internal: false };
  // Its caller went away before anything was recorded (a retry waiting for its key's first call): nobody reads this.
  if (err instanceof CallCancelledError) return { status: 499, body: errorBody(err.code, err.message), internal: false };
  if (err instanceof BundleError) return { status: 400, body: errorBody(err.code, err.message, err.problems), internal: false };
  if (err instanceof ValidationError) return { status: 422, body: errorBody(err.code, err.message, err.problems), internal: false };
  if (err instanceof NotFoundError) return { status: 404, body: errorBody(err.code, err.message), internal: false };
  if (err instanceof ConflictError || err instanceof InUseError) return { status: 409, body: errorBody(err.code, err.message), internal: false };
  if (err instanceof UpstreamError) return { status: 502, body: errorBody(err.code, err.message), internal: false };
  if (err instanceof StoreUnavailableError) return { status: 503, body: errorBody(err.code, err.message), internal: false };
  // The NATS object store away: the bundle could not be stored or read now, and will be once NATS is back.
  if (err instanceof BlobError && err.code === BLOB_ERRORS.unavailable) return { status: 503, body: errorBody(err.code, err.message), internal: false };
  return { status: 500, body: errorBody('internal', 'the server failed to handle the request; see its log'), internal: true };
}

function errorBody(code: string, message: string, problems?: { code: string; message: string }[]): ErrorBody {
  return { error: { code, message, ...(problems && problems.length > 1 ? { problems } : {}) } };
}
