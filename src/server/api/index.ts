/**
 * server/api/: the REST API's bodies, declared once as zod schemas. From each schema come the type its
 * handler is given or must answer (`z.infer`), the JSON Schema the router checks a body against, and the
 * OpenAPI document's description of it; the console and the command line's REST client take their types from
 * here too (type-only: the console imports nothing else of src/). Nothing here imports anything but zod and
 * itself, so the console's compiler reads these files alone.
 *
 * A schema here uses only what JSON Schema says the same way (no refinements, transforms or defaults): the
 * router checks bodies against the JSON Schema, and the type must be what that check guarantees.
 */
export { ErrorBody, pageOf, type Page } from './shared.js';
export { PackageTool, PackageView, PackageSummaryView, SkillView } from './packages.js';
export { ToolPolicy, DefinitionPolicy, AgentInput, AgentSpecView, AgentView, AgentVersionView, AgentDriftView, DriftAcceptInput } from './agents.js';
export {
  SessionInput, SessionView, SessionEndpoints, CreatedSessionView, SessionTool, SessionTools, FileEntry, FileListing,
} from './sessions.js';
export {
  CallOutcome, CallInput, CallCrash, EgressView, CallView, AgentCallView, ContentBlock, CallResult, CallAnswer, CallStatsRowView, CallStatsWindowName, CallStatsView,
} from './calls.js';
export { CallApprovalView, ApprovalView, HeldApprovalView, ApprovalDecisionInput, ApprovalDecided } from './approvals.js';
export { VaultInput, VaultView, CredentialPayload, CredentialInput, CredentialView } from './vaults.js';
export { ApiKeyScope, KeyInput, KeyView, CreatedKeyView } from './keys.js';
export { UserInput, UserUpdateInput, UserView, ConnectionView, DisconnectedView } from './users.js';
export { Health } from './meta.js';
