/**
 * subako's library API. "A tool is a tool": function packages, remote MCP servers and TypeScript functions
 * all become `Tool`s; a `Toolbox` of them can be called from TypeScript or served over MCP.
 *
 * ```ts
 * import { FunctionHost, mcp, defineTool, callTool } from 'subako';
 * ```
 */
export type { Tool, Toolbox, ToolCallContext, CallerInput, InputKinds, ProgressReporter, LogReporter, LogLevel, CallToolResult, ContentBlock, CallReport, CallStatus, JsonSchema } from './tool.js';
export { CallCancelledError } from './tool.js';
export { SubakoError, ValidationError, UsageError, type Problem } from './errors.js';
export { DEFAULT_CALL_LIMITS, type CallLimits } from './config.js';
/** The first names of `CallLimits` and `DEFAULT_CALL_LIMITS` (`Limits` alone did not say which), kept so library callers still compile. */
export { DEFAULT_CALL_LIMITS as DEFAULT_LIMITS, type CallLimits as Limits } from './config.js';
export { SUBAKO_VERSION } from './version.js';

// Function packages (ABI 1).
export { FunctionHost, toModelResult, CrashReason, TOOL_RULES, PROTOCOL_VERSION, renderForModel } from './function/index.js';
export type {
  LoadedPackage, FunctionHostOptions, PackageSource, ToolInfo, DiscoveryResult, FunctionCallContext,
  FunctionCallOutcome, CrashInfo, EgressGrant,
} from './function/index.js';
export { checkPackage, checkFunctionModule, readPackageDir, parseManifest, type PackageCheck, type PackageManifest } from './package/index.js';
export { checkModule, type ModuleCheck } from './wasm/index.js';

// MCP both ways.
export {
  mcp, Secret, McpServerError, McpInputRequiredError, McpAuthError, CallError, defineTool, defineResource, definePrompt, getMetadata, callTool,
  createToolboxHandler, ToolInputRequiredError, formElicitation, samplingRequest, rootsRequest, acceptedContent, type Auth, type DefineToolOptions, type DefineResourceOptions, type DefineResourceTemplateOptions, type DefinePromptOptions,
  type Catalog, type InputHandler, type InputRequestMessage, type ServedToolbox, ChangeFeed, type ListingChange,
} from './mcp/index.js';

// OAuth credentials made by `subako mcp login`, and typed bindings as `subako mcp pull` writes them.
export { login, accessTokenFor, listCredentials, forgetCredential, type LoginOptions, type LoginResult } from './mcp/oauth/index.js';
export { generateBindings, pullBindings, type GenerateBindingsOptions, type PullOptions } from './mcp/pull/index.js';
