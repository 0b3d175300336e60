/**
 * The MCP integration as one namespace, as the spec names it:
 *
 * ```ts
 * const toolbox = await mcp.tools({ url, auth: mcp.headers({ Authorization: Secret.concat('Bearer ', key) }) });
 * const sum = await callTool(toolbox.add, { x: 19, y: 23 });
 * await mcp.call({ url, auth: mcp.oauth('github'), tool: 'get_issue', arguments: { number: 1 } });
 * await mcp.serve({ double, readme: defineResource({ uri, name, read }) }, async (url) => handToSomeone(url));
 * ```
 */
import { headers, oauth } from './auth.js';
import { call, catalog, tools } from './client-api.js';
import { sharedMcpClientPool } from './connection.js';
import { serve } from './serve.js';

export const mcp = Object.freeze({
  tools,
  call,
  catalog,
  headers,
  oauth,
  serve,
  /** Closes the shared connections (a CLI run ends; a long-lived host shuts down). */
  close: (): Promise<void> => sharedMcpClientPool.closeAll(),
});

// Secrets and sealing live in common/ (every room may use them); the MCP face still offers them.
export { Secret, REDACTED, redactSecrets, seal, unseal, isSealed, sealingKey, keyFilePath, subakoHome, type SealOptions } from '../common/index.js';
export {
  McpServerError,
  McpInputRequiredError,
  McpAuthError,
  CallError,
  SealError,
  InvalidSchemaError,
  MCP_SERVER_ERROR,
  MCP_AUTH_ERROR,
  CALL_ERROR,
  type McpServerErrorReason,
  type McpAuthErrorReason,
} from './errors.js';
export { headers, oauth, isAuth, setAccessTokenSource, type Auth, type HeadersAuth, type OAuthAuth, type AccessTokenSource } from './auth.js';
export { tools, call, catalog, getMetadata, callTool, type ServerOptions, type DirectCall, type ToolMetadata } from './client-api.js';
export { RemoteCatalog } from './remote-catalog.js';
export {
  CatalogNotFoundError, CatalogCursorError, EMPTY_CATALOG, MAX_COMPLETION_VALUES, CATALOG_NOT_FOUND, CATALOG_BAD_CURSOR,
  type Catalog, type CatalogCapabilities, type CatalogPage, type CatalogRequestContext, type CacheHint, type CompletionRef,
  type CompletionRequest, type CompletionResult, type GetPromptResult, type PromptArgumentEntry, type PromptEntry, type PromptMessage,
  type ReadResourceResult, type ResourceContents, type ResourceEntry, type ResourceTemplateEntry,
} from './catalog.js';
export { isRelayableUri, MAX_URI_CHARS } from './catalog-entries.js';
export {
  defineResource, definePrompt, isCatalogDefinition, PromptArgumentError,
  type DefineResourceOptions, type DefineResourceTemplateOptions, type DefinePromptOptions, type DefinedResource, type DefinedResourceTemplate,
  type DefinedPrompt, type CatalogDefinition, type Completer, type ResourceBody,
} from './define-catalog.js';
export { staticCatalog, pageOf } from './static-catalog.js';
export { type ServedToolbox } from './served.js';
export { callThroughInput, describeInputRequests, MAX_INPUT_ROUNDS, type InputHandler } from './input-rounds.js';
export {
  ToolInputRequiredError, ClientCapabilityRequiredError, capabilitiesNamedFor, acceptedInputKinds, acceptedContent, checkInputRequests, elicitsForms, formElicitation, samplingRequest, rootsRequest, inputKindOf, MAX_INPUT_REQUESTS,
  MAX_REQUEST_STATE_CHARS, type CheckedInputRequests, type Elicitation, type InputRequestMessage,
} from './input-requests.js';
export { RequestStateSeal, RequestStateRefusedError, REQUEST_STATE_REFUSED, DEFAULT_REQUEST_STATE_TTL_MS, type StatefulRequest } from './request-state-seal.js';
export { parseTraceparent, traceparentOf, TRACEPARENT } from './trace-context.js';
export { McpClientPool, sharedMcpClientPool, type Descriptor } from './connection.js';
export { defineTool, isToolName, TOOL_NAME_RULE, type DefineToolOptions } from './define-tool.js';
export { createToolboxHandler, type ToolboxHandler, type ToolboxHandlerOptions } from './toolbox-handler.js';
export { InFlightCalls } from './in-flight-calls.js';
export { listenUpstream, type UpstreamListen, type UpstreamListenOptions } from './upstream-listen.js';
export { ChangeFeed, changeOfNotification, isListingChange, pacedListener, CHANGE_METHODS, type ListingChange, type ListingListener } from './change-feed.js';
export { type ListenAdmission, type ListenFilter, type ListenGate, type ListenRefusal } from './listen-bus.js';
export { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_BATCH_MESSAGES } from './endpoint-admission.js';
export { CALL_REFUSED_RPC_CODE, INVALID_PARAMS_RPC_CODE, ToolCallRefusedError, toolDescriptor } from './toolbox-server.js';
export { CapabilityRouter, routerFor, mintToken, type Capability, type CapabilityRouterOptions } from './capability-router.js';
export { serve, listenRouter, type ServeOptions, type Subscriber } from './serve.js';
export { isOriginAllowed, type OriginPolicy } from './origin.js';
export { checkArguments, checkAgainstSchema, compileSchema, type ArgumentProblem, type SchemaCheck } from '../common/index.js';
export { normalizeResult, resultText } from './result.js';
export { requiresTask, type TaskSupport } from './remote-tool.js';
export {
  TASKS_EXTENSION, TASK_METHODS, TERMINAL_TASK_STATUSES, TaskNotFoundError, createTaskResult, declaresTasks,
  type DetailedTaskView, type TaskError, type TaskHost, type TaskCall, type TaskRequest, type TaskResume, type TaskRun, type TaskStatus as McpTaskStatus, type TaskView,
} from './task-protocol.js';
export { UpstreamTaskError, parseUpstreamTask, pollToResult, resultOfTask, isTerminalTask, pollDelayMs } from './upstream-tasks.js';
export { formatToolList, formatResult } from './present.js';
export { bridgeStdio, BRIDGE_FAILED_RPC_CODE, type StdioBridge, type StdioBridgeOptions } from './stdio-bridge.js';
