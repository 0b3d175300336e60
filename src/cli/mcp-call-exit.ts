/**
 * What an MCP call failed with, as the exit code of call-exit.ts's table (a usage error the caller recognises
 * first: it is 2). Apart from the table so that `subako call` does not load the MCP client to exit.
 */
import { CallError, McpServerError, type McpServerErrorReason } from '../mcp/index.js';
import { CALL_EXIT, type CallExit } from './call-exit.js';

export function exitOfFailure(error: unknown): CallExit {
  if (error instanceof CallError) return CALL_EXIT.usage;
  const toolAnswered: McpServerErrorReason = 'tool_error';
  if (error instanceof McpServerError && error.reason === toolAnswered) return CALL_EXIT.toolError;
  return CALL_EXIT.notMade;
}
