export { FunctionHost, type LoadedPackage, type LentPackage, type FunctionHostOptions, type FunctionHostStats } from './host.js';
export { functionTool, callDeadlineMs, toModelResult, type FunctionToolRun } from './function-tool.js';
export { CrashReason, type CrashReasonCode } from './crash.js';
export { TOOL_RULES, checkTools, checkDiscoverResult } from './tool-rules.js';
export { renderForModel, renderCrash, type RenderOptions } from './render.js';
export { sniffImageType, MAX_IMAGE_EDGE } from './image.js';
export { PROTOCOL_VERSION } from './protocol.js';
export type * from './types.js';
