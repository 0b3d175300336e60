/** `pull`: typed TypeScript bindings for an MCP server's tools. */
export { generateBindings, type GenerateBindingsOptions, type ToolListing } from './generate.js';
export { pullBindings, pullCommandFor, type PullOptions, type PullResult } from './pull.js';
export { classifyServerUrl, urlVariableFor, checkUrlVariable, type UrlSecrecy } from './url-secrecy.js';
export { describePullCommand, shellQuote, type PullCommand } from './command-line.js';
export { SchemaMapper, JSON_VALUE, JSON_OBJECT } from './schema-to-ts.js';
export { toIdentifier, toTypeStem } from './identifiers.js';
