/**
 * How `subako call` (a package on this machine) and `subako mcp call` (a tool of an MCP server) end: one table,
 * so a script reads the same code from either.
 *
 *   0  the tool answered a result
 *   1  the tool answered an error (`isError`, a tool_error) or crashed: it ran, and said no
 *   2  the command line is wrong: arguments that are not a JSON object, a tool the package or server does not
 *      offer, arguments its input schema refuses (nothing was called), an input request no `--answer` answers
 *   3  the call could not be made: a package its checks refuse, a server that cannot be reached, refuses the
 *      credential, or answers with something that is not MCP (nothing ran)
 *
 * How an MCP failure maps onto this table is mcp-call-exit.ts's: this file is imported by `subako call`, which
 * must not load the MCP SDKs to run a local package.
 */
import type { FunctionCallOutcome } from '../function/index.js';

export const CALL_EXIT = { answered: 0, toolError: 1, usage: 2, notMade: 3 } as const;
export type CallExit = (typeof CALL_EXIT)[keyof typeof CALL_EXIT];

/** A local call's outcome, as its exit code. */
export function exitOfOutcome(status: FunctionCallOutcome['status']): CallExit {
  return status === 'ok' ? CALL_EXIT.answered : CALL_EXIT.toolError;
}
