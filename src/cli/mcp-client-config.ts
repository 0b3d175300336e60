/**
 * `subako mcp client-config <client> --url URL`: the snippet that gives a common MCP client the server at
 * URL, to paste into that client's configuration. Clients that speak Streamable HTTP get the URL itself;
 * clients that only launch stdio servers get this Node and this subako running `mcp stdio` (absolute paths,
 * so the snippet works whatever the client's PATH). The URL of a session is a secret: the snippet says so
 * on standard error, never on standard output.
 */
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { collect, headerFlags } from './server-flags.js';

export interface ClientConfigInput {
  /** The name the client lists the server under. */
  name: string;
  url: string;
  /** Headers to send, name → value (only for clients whose configuration has headers). */
  headers: Record<string, string>;
  /** How to launch the stdio bridge: the Node binary and subako's bin script. */
  node: string;
  subako: string;
}

interface ClientFormat {
  /** Where the snippet goes, for the person. */
  where: string;
  render(input: ClientConfigInput): string;
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
const headersOrNothing = (headers: Record<string, string>): { headers?: Record<string, string> } =>
  Object.keys(headers).length > 0 ? { headers } : {};

function stdioLaunch(input: ClientConfigInput): { command: string; args: string[] } {
  const headerArgs = Object.entries(input.headers).flatMap(([name, value]) => ['--header', `${name}=${value}`]);
  return { command: input.node, args: [input.subako, 'mcp', 'stdio', '--url', input.url, ...headerArgs] };
}

/** The clients this knows, by the name given on the command line. */
export const CLIENT_FORMATS: Readonly<Record<string, ClientFormat>> = {
  'claude-desktop': {
    where: 'claude_desktop_config.json (Settings → Developer → Edit Config), merged into "mcpServers"',
    render: (input) => json({ mcpServers: { [input.name]: stdioLaunch(input) } }),
  },
  'claude-code': {
    where: 'a shell (adds the server to Claude Code)',
    render: (input) =>
      `claude mcp add --transport http ${input.name} ${shellQuote(input.url)}${Object.entries(input.headers)
        .map(([name, value]) => ` --header ${shellQuote(`${name}: ${value}`)}`)
        .join('')}\n`,
  },
  cursor: {
    where: '~/.cursor/mcp.json or .cursor/mcp.json, merged into "mcpServers"',
    render: (input) => json({ mcpServers: { [input.name]: { url: input.url, ...headersOrNothing(input.headers) } } }),
  },
  vscode: {
    where: '.vscode/mcp.json, merged into "servers"',
    render: (input) => json({ servers: { [input.name]: { type: 'http', url: input.url, ...headersOrNothing(input.headers) } } }),
  },
  windsurf: {
    where: '~/.codeium/windsurf/mcp_config.json, merged into "mcpServers"',
    render: (input) => json({ mcpServers: { [input.name]: { serverUrl: input.url, ...headersOrNothing(input.headers) } } }),
  },
  stdio: {
    where: 'any client that launches a stdio server: the command and its arguments',
    render: (input) => json(stdioLaunch(input)),
  },
};

function shellQuote(text: string): string {
  return /^[A-Za-z0-9_\-./:=@]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** What the person pastes, and where: pure, so that a test can check each client's snippet. */
export function clientConfig(client: string, input: ClientConfigInput): { snippet: string; where: string } {
  const format = Object.prototype.hasOwnProperty.call(CLIENT_FORMATS, client) ? CLIENT_FORMATS[client] : undefined;
  if (!format) throw new UsageError(`unknown client "${client}": give one of ${Object.keys(CLIENT_FORMATS).join(', ')}`);
  return { snippet: format.render(input), where: format.where };
}

/** This subako's own bin script (dist/src/cli/ → bin/), which the stdio clients launch. */
const SUBAKO_BIN = fileURLToPath(new URL('../../../bin/subako.js', import.meta.url));

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function registerMcpClientConfig(command: Command): void {
  command
    .command('client-config')
    .description(`Print the configuration that gives an MCP client this server: ${Object.keys(CLIENT_FORMATS).join(', ')}.`)
    .argument('<client>', `the client: ${Object.keys(CLIENT_FORMATS).join(', ')}`)
    .requiredOption('--url <url>', 'the MCP server URL (a session URL, an mcp.serve URL)')
    .option('--name <name>', 'the name the client lists it under', 'subako')
    .option('--header <name=value>', 'a header the client is to send (repeatable)', collect, [])
    .action((client: string, flags: { url: string; name: string; header: string[] }) => {
      let url: URL;
      try {
        url = new URL(flags.url);
      } catch {
        throw new UsageError('--url is not a URL: give the http(s) URL of the MCP server');
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--url must be an http: or https: URL');
      if (!NAME.test(flags.name)) throw new UsageError('--name must be 1 to 64 letters, digits, "_" or "-"');
      // The snippet is where these headers are meant to go: here, and only here, their values are written out.
      const headers = Object.fromEntries(headerFlags(flags).map(([name, value]) => [name, value.reveal()]));
      const { snippet, where } = clientConfig(client, { name: flags.name, url: flags.url, headers, node: process.execPath, subako: SUBAKO_BIN });
      process.stderr.write(`# paste into ${where}; it holds the server's URL${flags.header.length > 0 ? ' and headers' : ''}: keep it private\n`);
      process.stdout.write(snippet);
    });
}
