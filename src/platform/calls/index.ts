/**
 * platform/calls/: the session pipeline — a session's toolbox (its tools, named so no source takes another's
 * name), and what the platform adds to every call: approval, admission (fair turns at the workers), the call
 * log and its live feed, input requests relayed to the client; and the session's resources and prompts.
 */
export { SessionToolboxes, type AgentToolbox, type ChangeSource, type SessionTool } from './agent-toolbox.js';
export { MAX_ELICITATION_MESSAGE_CHARS, MAX_ELICITED_DEPTH } from './approval-view.js';
export { APPROVAL_INPUT_KEY, Approvals, MAX_HELD_ARGUMENT_BYTES, MAX_HELD_DEPTH, MAX_HELD_PER_SESSION, argumentsDigest, canonicalJson, type ApprovalGate, type Approver, type HeldApproval, type PendingApproval, type Verdict } from './approvals.js';
export { FleetSlots, type FleetSlotsOptions } from './fleet-slots.js';
export { CALL_REFUSED, CallAdmission, CallRefusedError, RETRY_AFTER_MS, defaultCallAdmissionLimits, type AdmittedCall, type CallAdmissionLimits, type NotStarted } from './call-admission.js';
export { type CallEvent, type CallEvents } from './call-events.js';
export { CallLog, type LoggedCall, type SessionCallContext } from './call-log.js';
export { STATS_WINDOWS, statsQuery, statsWindow, type CallStatsWindow, type StatsWindow } from './call-stats.js';
export { CALL_KEY_TTL_MS, IDEMPOTENCY_META_KEY, REPLAYED_META_KEY, checkIdempotencyKey } from './call-keys.js';
export { CallKeyInProgressError, CallKeyInvalidError, CallKeyReusedError, CallNotStartedError, MAX_IDEMPOTENCY_KEY_CHARS } from './call-refusals.js';
export { SOURCE_SEPARATOR, overlappingSource } from './tool-names.js';
export { InputRelay, DEFAULT_INPUT_WINDOW_MS, inputNeededResult, unanswerable } from './input-relay.js';
export { SessionCatalog, MAX_LISTED_PER_SERVER, MAX_SESSION_TTL_MS, type CatalogSource } from './session-catalog.js';
export { SESSION_RESOURCE_SCHEME, sessionResourceUri, parseSessionResourceUri, resourceNaming, type ResourceNaming } from './resource-uris.js';
export { changedFields, compareWithPins, definitionDigest, pinSetDigest, pinsOf, type ServerDrift } from './tool-pins.js';
export { SEARCH_TOOL_NAME, MAX_SEARCH_LIMIT, searchTools } from './tool-search.js';
export { remoteServerHeaders } from './remote-headers.js';
