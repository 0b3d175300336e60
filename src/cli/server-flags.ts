/**
 * The flags that name an MCP server and how to authenticate to it, shared by every `subako mcp` subcommand
 * that talks to one (`tools`, `call`, `pull`, `stdio`): `--url`, `--header NAME=VALUE` (repeatable, values
 * kept secret) or `--oauth NAME` (a credential stored by `subako mcp login`), never both.
 */
import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { mcp, type Auth, type Secret } from '../mcp/index.js';
import { parseHeaderFlag } from './header-flag.js';

export interface ServerFlags {
  url: string;
  header: string[];
  oauth?: string;
  json?: boolean;
}

/** commander's way of making a flag repeatable: each use adds to the list. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function serverOptions(command: Command, { json = true }: { json?: boolean } = {}): Command {
  command
    .requiredOption('--url <url>', 'the MCP server URL (Streamable HTTP)')
    .addOption(new Option('--header <name=value>', 'a header to send (repeatable); the value is kept secret').argParser(collect).default([]))
    .option('--oauth <name>', 'a stored OAuth credential (see subako mcp login)');
  return json ? command.option('--json', 'print JSON instead of text') : command;
}

/** The headers given with `--header`, parsed (the values wrapped as Secrets at once). */
export function headerFlags(flags: Pick<ServerFlags, 'header'>): Array<[string, Secret]> {
  return flags.header.map(parseHeaderFlag);
}

export function authFromFlags(flags: Pick<ServerFlags, 'header' | 'oauth'>): Auth {
  if (flags.oauth !== undefined && flags.header.length > 0) throw new UsageError('give --header or --oauth, not both');
  try {
    return flags.oauth !== undefined ? mcp.oauth(flags.oauth) : mcp.headers(Object.fromEntries(headerFlags(flags)));
  } catch (err) {
    if (err instanceof TypeError) throw new UsageError(err.message);
    throw err;
  }
}
