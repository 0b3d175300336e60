/**
 * `subako mcp login | credentials | forget`: making, listing and deleting named OAuth credentials
 * (see src/mcp/oauth). Tokens are never printed.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { Secret } from '../common/index.js';
import { SubakoError, UsageError } from '../errors.js';
import { CredentialStore, login, openInBrowser, PRIVATE_KEY_ALGORITHMS, type LoginOptions, type PrivateKeyAlgorithm } from '../mcp/oauth/index.js';
import { EXIT_FAILED, type CommandContext } from './command-context.js';

interface LoginFlags {
  url: string;
  name: string;
  scope?: string;
  browser: boolean;
  timeout: string;
  clientId?: string;
  clientSecret?: string;
  clientMetadataUrl?: string;
  clientCredentials?: boolean;
  privateKeyFile?: string;
  privateKeyAlg?: string;
}

/** Read when --client-id is given without --client-secret, so the secret can stay out of the process list. */
const CLIENT_SECRET_VARIABLE = 'SUBAKO_OAUTH_CLIENT_SECRET';

export function registerMcpOAuth(mcpCommand: Command, ctx: CommandContext): void {
  const fail = (err: unknown): void => {
    if (err instanceof UsageError || !(err instanceof SubakoError)) throw err;
    process.stderr.write(`subako: ${err.message}\n`);
    ctx.exitCode = EXIT_FAILED;
  };

  mcpCommand
    .command('login')
    .description('sign in to an OAuth-protected MCP server and store the credential under a name')
    .requiredOption('--url <url>', 'the MCP server')
    .requiredOption('--name <name>', 'the name to store the credential under, for mcp.oauth(name) and --oauth')
    .option('--scope <scopes>', 'space-separated scopes to ask for (default: what the server advertises); for an existing credential, a step-up: asked for on top of the scopes it has (the answer to an insufficient_scope error)')
    .option('--no-browser', 'only print the URL to open; do not try to open a browser')
    .option('--timeout <seconds>', 'how long to wait for the sign-in', '300')
    .option('--client-id <id>', 'a client registered beforehand (redirect URI http://127.0.0.1/callback, any port), for servers without dynamic registration')
    .option('--client-secret <secret>', `that client's secret, if it has one (stored sealed; or set ${CLIENT_SECRET_VARIABLE} to keep it out of the process list)`)
    .option('--client-metadata-url <https-url>', 'your Client ID Metadata Document, used as the client id where the server supports them')
    .option('--client-credentials', `log in as a machine (OAuth client-credentials grant, no browser) with --client-id and its secret (--client-secret or ${CLIENT_SECRET_VARIABLE}) or --private-key-file`)
    .option('--private-key-file <pem>', 'with --client-credentials: a PEM private key signing private_key_jwt client assertions (stored sealed)')
    .option('--private-key-alg <alg>', `the key's signing algorithm: ${PRIVATE_KEY_ALGORITHMS.join(' or ')}`, 'ES256')
    .action(async (flags: LoginFlags) => {
      const seconds = Number(flags.timeout);
      try {
        if (flags.clientSecret !== undefined && flags.clientId === undefined) {
          throw new UsageError('--client-secret belongs to a pre-registered client: give --client-id too');
        }
        const clientSecret = flags.clientSecret ?? (flags.clientId !== undefined ? nonEmpty(process.env[CLIENT_SECRET_VARIABLE]) : undefined);
        const machine = flags.clientCredentials === true ? await clientCredentialsOf(flags, clientSecret) : undefined;
        if (machine === undefined && flags.privateKeyFile !== undefined) {
          throw new UsageError('--private-key-file is for --client-credentials: give that too (and --client-id)');
        }
        const result = await login({
          url: flags.url,
          name: flags.name,
          scope: flags.scope,
          ...(machine !== undefined ? { clientCredentials: machine } : {}),
          ...(machine === undefined && flags.clientId !== undefined
            ? { client: { clientId: flags.clientId, ...(clientSecret !== undefined ? { clientSecret: Secret.from(clientSecret) } : {}) } }
            : {}),
          ...(flags.clientMetadataUrl !== undefined ? { clientMetadataUrl: flags.clientMetadataUrl } : {}),
          timeoutMs: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined,
          onAuthorizationUrl: (url) => {
            process.stdout.write(`Open this URL in a browser to sign in:\n\n  ${url}\n\n`);
            if (flags.browser && openInBrowser(url)) process.stdout.write('(Opening it in your browser.)\n');
            process.stdout.write('Waiting for the sign-in to finish…\n');
          },
        });
        const scopes = result.scope !== undefined ? ` with scopes "${result.scope}"` : '';
        if (result.movedFrom !== undefined) {
          process.stdout.write(`The server's authorization server moved from ${result.movedFrom} to ${result.authorizationServer}; signed in there with a client of its own.\n`);
        }
        if (result.client === 'client-credentials') process.stdout.write(`Signed in as the client itself (client-credentials grant) at ${result.authorizationServer}.\n`);
        process.stdout.write(`Stored credential "${result.name}" for ${result.serverUrl}${scopes}. Use it as mcp.oauth("${result.name}") or --oauth ${result.name}.\n`);
      } catch (err) {
        fail(err);
      }
    });

  mcpCommand
    .command('credentials')
    .description('list the names of stored OAuth credentials (never their tokens)')
    .option('--json', 'print a JSON array')
    .action(async (flags: { json?: boolean }) => {
      try {
        const names = await new CredentialStore().names();
        if (flags.json) process.stdout.write(`${JSON.stringify(names)}\n`);
        else if (names.length === 0) process.stderr.write('no stored credentials; make one with `subako mcp login`\n');
        else process.stdout.write(names.map((n) => `${n}\n`).join(''));
      } catch (err) {
        fail(err);
      }
    });

  mcpCommand
    .command('forget')
    .description('delete a stored OAuth credential')
    .argument('<name>', 'the credential to delete')
    .action(async (name: string) => {
      try {
        if (await new CredentialStore().forget(name)) {
          process.stdout.write(`forgot credential "${name}"\n`);
        } else {
          process.stderr.write(`subako: there is no stored credential named "${name}"\n`);
          ctx.exitCode = EXIT_FAILED;
        }
      } catch (err) {
        fail(err);
      }
    });
}

/** --client-credentials: the client id, and its secret or private key (read from the file here: login never reads files). */
async function clientCredentialsOf(flags: LoginFlags, clientSecret: string | undefined): Promise<NonNullable<LoginOptions['clientCredentials']>> {
  if (flags.clientId === undefined) throw new UsageError('--client-credentials needs --client-id: the id the authorization server gave this machine');
  if (flags.clientMetadataUrl !== undefined) throw new UsageError('--client-metadata-url is for a person\'s sign-in, not --client-credentials');
  const hasKey = flags.privateKeyFile !== undefined;
  if (hasKey && flags.clientSecret !== undefined) throw new UsageError('give --client-secret or --private-key-file, not both');
  if (!hasKey && clientSecret === undefined) {
    throw new UsageError(`--client-credentials needs the client's secret (set ${CLIENT_SECRET_VARIABLE}, or --client-secret) or --private-key-file`);
  }
  if (!hasKey) return { clientId: flags.clientId, clientSecret: Secret.from(clientSecret!) };
  const algorithm = flags.privateKeyAlg ?? 'ES256';
  if (!(PRIVATE_KEY_ALGORITHMS as readonly string[]).includes(algorithm)) {
    throw new UsageError(`--private-key-alg is ${PRIVATE_KEY_ALGORITHMS.join(' or ')}, not "${algorithm.slice(0, 20)}"`);
  }
  let pem: string;
  try {
    pem = await readFile(flags.privateKeyFile!, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read --private-key-file ${flags.privateKeyFile}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
  return { clientId: flags.clientId, privateKey: { pem, algorithm: algorithm as PrivateKeyAlgorithm } };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
