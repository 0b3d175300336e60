/**
 * common/: what every room may use and that belongs to none. It imports no room (only the shared leaves
 * beside them: errors.ts, tool.ts).
 */
export { REDACTED, CALL_LOG_PREVIEW_BYTES, cutToBytes, redactArguments, redactText } from './redact.js';
export { Secret, redactSecrets, redactSecretsDeep } from './secret.js';
export { seal, unseal, isSealed, sealingKey, keyFilePath, type SealOptions } from './seal.js';
export { subakoHome } from './data-home.js';
export { isHttpsOrLoopback } from './https-or-loopback.js';
export { classifyServerUrl, isPlainSegment, redactUrl, redactUrlsIn, type UrlSecrecy } from './url-secrecy.js';
export {
  compileSchema, checkAgainstSchema, checkArguments, untrustedCheck, TOOL_ARGUMENTS, REQUEST_BODY, queryParameter, MAX_UNTRUSTED_SCHEMA_CHARS,
  type SchemaCheck, type SchemaProblem, type ArgumentProblem, type SchemaSubject, type SchemaOrigin,
} from './json-schema.js';
export { SEAL_ERROR, SealError, InvalidSchemaError, type SealErrorReason } from './errors.js';
export { createLogger, defaultLogLevel, silentLogger, type Logger, type LoggerOptions, type LogLevel, type LogFields } from './log.js';
export { systemClock, isoAt, type Clock } from './clock.js';
export { systemErrorCode, isSystemError } from './system-error.js';
export { withoutUndefined } from './without-undefined.js';
export { canonicalJson, argumentsDigest } from './canonical-json.js';
export { jsonBytes } from './json-bytes.js';
export { startSpan, inSpan, markFailed, traceFields, SpanKind, type Traced, type Attributes, type Span } from './trace.js';
export { takeRandomBytes } from './random-pool.js';
export { abortWith } from './abort-link.js';
