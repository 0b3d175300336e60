/**
 * egress/: `subako_http` — request parsing, policy (allowlist, forbidden destinations, credential grants),
 * the fetch, redirects, file bodies and outputs, error kinds. It knows nothing of WASM instances: the sandbox
 * hands it request bytes on its `http` bridge channel and gives the answer bytes back to the guest.
 */
export { createHttpBridge, type HttpBridgeOptions, type CaOption } from './bridge.js';
export { HttpsConnectionPool, type HttpsConnectionPoolOptions } from './connection-pool.js';
export { parseEgressPolicyFile, compilePolicy, type CompiledPolicy, type EgressPolicy, type EgressPolicyFile, type PrivateDestinations } from './policy.js';
export { parseHttpRequest, MAX_REQUEST_BYTES, MAX_TIMEOUT_MS, HTTP_METHODS, type HttpRequest, type HttpMethod, type RequestBody, type OutputSpec } from './request.js';
export { matchesAllowlist, parseAllowEntry, canonicalHost, type AllowEntry } from './allowlist.js';
export { isForbiddenAddress } from './forbidden-address.js';
export { canonicalOrigin, type VaultCredential } from './credentials.js';
export { EgressError } from './errors.js';
export { type HttpAnswer, type HttpOk } from './answer.js';
export { MAX_INLINE_BODY_BYTES, type AnswerBody } from './output.js';
export { MAX_REDIRECTS } from './perform.js';
export { VOLUME_ROOTS, type VolumeMount } from './volume-path.js';
export { type HostLookup, type ResolvedAddress } from './destination.js';
export { cachingLookup, type LookupCacheOptions } from './lookup-cache.js';
export { type EgressLogEntry } from './log.js';
