/**
 * `subako mcp …`: MCP servers for people. `tools` lists a server's tools, `call` calls one: it lists them
 * first, so a tool name the server does not have and arguments its schema refuses are told apart (exit 2,
 * naming the tool or the argument and rule, nothing sent), and the call goes out as a listed tool's does,
 * with the `Mcp-Param-*` headers the schema asks for. Header values
 * given with `--header` are wrapped as Secrets at once: they reach the server and nothing else (never an
 * output line or an error message).
 *
 * The other subcommands live in their own files and hang themselves on the same `mcp` command:
 * mcp-pull.ts (`pull`), mcp-oauth.ts (`login`, `credentials`, `forget`), mcp-stdio.ts (`stdio`) and
 * mcp-client-config.ts (`client-config`).
 */
import type { Command } from 'commander';
import { SubakoError, UsageError } from '../errors.js';
import { mcp, getMetadata, callTool, CallError, McpInputRequiredError, formatResult, formatToolList } from '../mcp/index.js';
import { Option } from 'commander';
import { EXIT_FAILED, EXIT_USAGE, type CommandContext } from './command-context.js';
import { CALL_EXIT } from './call-exit.js';
import { exitOfFailure } from './mcp-call-exit.js';
import { registerMcpOAuth } from './mcp-oauth.js';
import { registerMcpPull } from './mcp-pull.js';
import { registerMcpStdio } from './mcp-stdio.js';
import { registerMcpClientConfig } from './mcp-client-config.js';
import { authFromFlags, collect, serverOptions, type ServerFlags } from './server-flags.js';
import { answeringFrom, parseAnswers } from './input-answers.js';

interface CallFlags extends ServerFlags {
  /** `--answer KEY=JSON`, each an answer to the input request the server names KEY. */
  answer: string[];
  /** False with `--no-check`: the arguments go to the server as given, not checked against the schema first. */
  check: boolean;
}

/**
 * `exitOf`: the exit code of a failure. `mcp call` ends as `subako call` does (call-exit.ts); `tools` 2 for what
 * the person must fix, else 1.
 */
async function run(ctx: CommandContext, json: boolean | undefined, action: () => Promise<void>, exitOf: (err: SubakoError) => number): Promise<void> {
  try {
    await action();
  } catch (err) {
    if (err instanceof UsageError || !(err instanceof SubakoError)) throw err;
    if (json) process.stdout.write(`${JSON.stringify({ error: err.toJSON() })}\n`);
    else process.stderr.write(`subako: ${err.message}\n`);
    ctx.exitCode = exitOf(err);
  } finally {
    await mcp.close();
  }
}

/** A tool name the server does not list; exit 2 like arguments it refuses. */
class UnknownToolError extends SubakoError {
  // No URL in the message: it may be a capability URL, a secret.
  constructor(tool: string, offered: string[]) {
    super('unknown_tool', `the server has no tool "${tool}"; it offers: ${offered.length > 0 ? offered.join(', ') : '(no tools)'}`);
  }
}

function parseArguments(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`ARGS-JSON is not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError('ARGS-JSON must be a JSON object');
  return value as Record<string, unknown>;
}

export function registerMcp(program: Command, ctx: CommandContext): Command {
  const command = program.command('mcp').description('Use remote MCP servers: list and call their tools.');

  serverOptions(command.command('tools').description("List a server's tools.")).action(async (flags: ServerFlags) => {
    await run(ctx, flags.json, async () => {
      const toolbox = await mcp.tools({ url: flags.url, auth: authFromFlags(flags) });
      const metadata = Object.values(toolbox).map(getMetadata);
      process.stdout.write(flags.json ? `${JSON.stringify(metadata, null, 2)}\n` : formatToolList(metadata));
    }, (err) => (err instanceof CallError ? EXIT_USAGE : EXIT_FAILED));
  });

  serverOptions(
    command
      .command('call')
      .description('Call a tool by name (arguments as one JSON object) and print its result.')
      .argument('<tool>', 'the tool name')
      .argument('[args-json]', 'the arguments, a JSON object (default {})')
      .addOption(new Option('--answer <key=json>', 'answer the input request the server names KEY (MCP 2026-07-28) with this JSON result, e.g. confirm=\'{"action":"accept","content":{"ok":true}}\' (repeatable)').argParser(collect).default([]))
      .option('--no-check', 'send the arguments as given, without checking them against the tool\'s input schema first (the server decides)'),
  ).action(async (tool: string, argsJson: string | undefined, flags: CallFlags) => {
    const args = parseArguments(argsJson);
    // Declares that this command answers form and URL input (the server may then ask), from what --answer gives.
    const onInputRequest = answeringFrom(parseAnswers(flags.answer));
    await run(ctx, flags.json, async () => {
      const auth = authFromFlags(flags);
      const toolbox = await mcp.tools({ url: flags.url, auth, onInputRequest });
      if (!Object.prototype.hasOwnProperty.call(toolbox, tool)) throw new UnknownToolError(tool, Object.keys(toolbox));
      // callTool: checked against the schema first (CallError naming the argument), then sent with its headers;
      // with --no-check, sent as given (the schema still says which arguments travel as Mcp-Param-* headers).
      const result = flags.check
        ? await callTool(toolbox[tool], args)
        : await mcp.call({ url: flags.url, auth, tool, arguments: args, inputSchema: toolbox[tool].inputSchema, onInputRequest });
      process.stdout.write(flags.json ? `${JSON.stringify(result, null, 2)}\n` : formatResult(result));
    }, (err) => (err instanceof UnknownToolError || err instanceof McpInputRequiredError ? CALL_EXIT.usage : exitOfFailure(err)));
  });

  registerMcpPull(command, ctx);
  registerMcpOAuth(command, ctx);
  registerMcpStdio(command, ctx);
  registerMcpClientConfig(command);
  return command;
}
