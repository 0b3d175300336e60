/**
 * platform/: agents, sessions (volumes), vaults, the call log, the session tool pipeline and the store
 * behind them. What server/ (and the composition root) may use of it.
 */
export { Platform, DEFAULT_INSTANCE_LEASE_MS, MIN_INSTANCE_LEASE_MS, type PlatformOptions } from './platform.js';
export { FunctionRuntime, type FunctionRuntimeOptions } from './function-runtime.js';
export type { RemoteMcp } from './remote-mcp.js';
export { SessionListens, MAX_LISTEN_STREAMS_PER_SESSION, MAX_LISTEN_URIS_PER_STREAM, type ChangeOrigin } from './session-listens.js';
export type { PackageRuntime, RuntimeHealth } from './package-runtime.js';
export type { HealthReport, HealthPart, FleetHealth } from './health.js';
export { bootstrapIfFresh, type FirstStart } from './bootstrap.js';
export { API_KEY_SCOPES, scopePermits, mintAdminKey, type Access } from './api-keys.js';
export {
  CallAdmission, CallRefusedError, CALL_REFUSED, RETRY_AFTER_MS, defaultCallAdmissionLimits,
  type CallAdmissionLimits, type AdmittedCall, type NotStarted,
} from './calls/index.js';
export { NotFoundError, ConflictError, InUseError, UpstreamError, StoreUnavailableError } from './errors.js';
export {
  CALL_KEY_TTL_MS, IDEMPOTENCY_META_KEY, REPLAYED_META_KEY, MAX_IDEMPOTENCY_KEY_CHARS, checkIdempotencyKey,
  CallKeyInProgressError, CallKeyInvalidError, CallKeyReusedError, CallNotStartedError,
} from './calls/index.js';
export type { AgentToolbox, SessionTool, LoggedCall, SessionCallContext, CallStatsWindow, StatsWindow } from './calls/index.js';
export { STATS_WINDOWS } from './calls/index.js';
export {
  Approvals, canonicalJson, argumentsDigest, APPROVAL_INPUT_KEY, MAX_HELD_PER_SESSION, MAX_HELD_DEPTH, MAX_HELD_ARGUMENT_BYTES,
  type Approver, type ApprovalGate, type HeldApproval, type PendingApproval, type Verdict,
} from './calls/index.js';
export { MAX_ELICITATION_MESSAGE_CHARS, MAX_ELICITED_DEPTH } from './calls/index.js';
export type { AgentInput } from './agents.js';
export type { AgentDrift, ServerDriftReport, DigestedDefinition } from './tool-pinning.js';
export type { SessionInput } from './sessions.js';
export type { UserInput, UserUpdate } from './users.js';
export { USER_ID_RULE, MAX_USER_ID_CHARS, isUserId } from './user-ids.js';
export type { CredentialInput } from './vaults.js';
export type * from './store/index.js';
export type { CallEvents, CallEvent } from './calls/index.js';
export { NatsRuntime, type NatsRuntimeOptions } from './scale-out/index.js';
export { NatsWorker, type NatsWorkerOptions } from './scale-out/index.js';
export { natsSubjects, type NatsSubjects } from './scale-out/index.js';
export { connectNats } from './scale-out/index.js';
export { busKey, BUS_DROP_REASONS, type BusDropReason } from './scale-out/index.js';
export { checkBusKey, BusKeyMismatchError } from './scale-out/index.js';
export { CallEventRelay, ListingRelay } from './scale-out/index.js';
export type { HistogramSnapshot, NatsDispatchStats, NatsCallResult } from './scale-out/index.js';
export { ConnectionService, CALLBACK_PATH, CLIENT_METADATA_PATH, CONNECTIONS_VAULT, type ConnectionView, type ConsentSubject } from './connections.js';
export { ConnectionConsentError } from './errors.js';
