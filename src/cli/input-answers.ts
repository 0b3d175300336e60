/**
 * `subako mcp call --answer KEY=JSON`: the answers a person gives ahead of time to what a tool's server may ask
 * (MCP 2026-07-28 multi-round-trip input). The server names each input request with a key; the answer under that
 * key is sent back as the bare result MCP defines for the request — an elicitation's
 * `{"action":"accept","content":{…}}` (or `decline`, `cancel`), sampling's message, roots' `{"roots":[…]}` — in
 * every round that asks it. A request no answer names ends the call, saying which flag would answer it: a command
 * cannot stop and ask, and a guess is worse than no call.
 */
import { UsageError } from '../errors.js';
import { McpInputRequiredError, describeInputRequests, type InputHandler, type InputRequestMessage } from '../mcp/index.js';

/**
 * A server asked for input the command line does not answer (exit 2: the command line is what to change). An
 * McpInputRequiredError, as the library's own "nobody can answer this", so the connection takes it as the
 * caller's refusal, not as a broken server.
 */
export class UnansweredInputError extends McpInputRequiredError {
  constructor(readonly key: string, tool: string, request: InputRequestMessage, message: string) {
    super(message, { [key]: request }, undefined, { tool });
  }
}

/** The `--answer` flags, by key. A key given twice, or a value that is not `KEY=JSON`, is a usage error. */
export function parseAnswers(flags: readonly string[]): ReadonlyMap<string, unknown> {
  const answers = new Map<string, unknown>();
  for (const flag of flags) {
    const at = flag.indexOf('=');
    const key = at > 0 ? flag.slice(0, at).trim() : '';
    if (key === '') throw new UsageError(`--answer takes KEY=JSON (the key the server gives its input request), not ${JSON.stringify(flag.slice(0, 60))}`);
    if (answers.has(key)) throw new UsageError(`--answer ${key} is given twice; give each input request's answer once`);
    let value: unknown;
    try {
      value = JSON.parse(flag.slice(at + 1));
    } catch (err) {
      throw new UsageError(`--answer ${key}: the answer is not JSON (${(err as Error).message}); e.g. ${key}='{"action":"accept","content":{}}'`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new UsageError(`--answer ${key}: the answer is a JSON object, the result MCP defines for the request (e.g. {"action":"accept","content":{}} for a form)`);
    }
    answers.set(key, value);
  }
  return answers;
}

/** The handler that answers from `answers`, or refuses what they do not name. */
export function answeringFrom(answers: ReadonlyMap<string, unknown>): InputHandler {
  return (request, { tool, key }) => {
    if (answers.has(key)) return answers.get(key);
    throw new UnansweredInputError(key, tool, request,
      `tool "${tool}" needs input "${key}" (${describeInputRequests({ [key]: request })}); ` +
      `answer it with --answer ${key}='<JSON>' (for a form: '{"action":"accept","content":{…}}', or "decline")`);
  };
}
