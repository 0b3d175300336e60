/**
 * `subako vaults list|get|create|delete|add-credential`: vaults of credentials. `add-credential` reads the secret
 * from standard input, never from a flag (a secret on a command line stays in the shell's history and shows in
 * `ps`): typed without echo on a terminal, or piped in. `get` lists credentials, never a secret.
 */
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import type { CredentialInput, CredentialPayload, CredentialView, VaultInput, VaultView } from '../server/api/index.js';
import { clientFor, platformCommand, type ConnectionFlags } from './api-client.js';
import { print, printFields, printTable } from './output.js';
import { readSecret } from './secret-input.js';

/** The schemes as a person names them, and the API's name of each. */
const SCHEMES = { bearer: 'static_bearer', headers: 'static_headers', oauth: 'oauth' } as const;
type SchemeName = keyof typeof SCHEMES;

interface CredentialFlags extends ConnectionFlags {
  target: string;
  scheme: string;
  header?: string;
  name?: string;
}

/** What standard input holds for each scheme, for the prompt and the refusal of an empty one. */
function wanted(scheme: SchemeName, header: string | undefined): string {
  if (scheme === 'bearer') return 'the bearer token';
  if (scheme === 'headers') return header !== undefined ? `the value of the header ${header}` : 'a JSON object of header names and values';
  return 'a JSON object {"access_token", "expires_at"?, "refresh"?}';
}

/** The credential's payload from the secret read: pure, so its refusals can be told without a server. */
export function credentialPayload(scheme: SchemeName, secret: string, header?: string): CredentialPayload {
  const json = (): Record<string, unknown> => {
    let value: unknown;
    try {
      value = JSON.parse(secret);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error; // expected: not JSON
      // The text is not repeated: it is the secret.
      throw new UsageError(`standard input is not JSON; for --scheme ${scheme}${header === undefined ? '' : ' without --header'} it holds ${wanted(scheme, undefined)}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`standard input must hold ${wanted(scheme, undefined)}`);
    return value as Record<string, unknown>;
  };
  if (scheme === 'bearer') return { auth_scheme: 'static_bearer', token: secret.trim() };
  if (scheme === 'headers') {
    return { auth_scheme: 'static_headers', headers: header !== undefined ? { [header]: secret.trim() } : (json() as Record<string, string>) };
  }
  return { ...(json() as Omit<Extract<CredentialPayload, { auth_scheme: 'oauth' }>, 'auth_scheme'>), auth_scheme: 'oauth' };
}

export function registerVaults(program: Command): void {
  const vaults = program.command('vaults').description('Vaults of credentials: list, get (with its credentials, never a secret), create, add-credential, delete.');
  platformCommand(vaults.command('list').description('List vaults.'))
    .action(async (flags: ConnectionFlags) => {
      const items = await clientFor(flags).list<VaultView>('/v1/vaults');
      print(flags.json, items, () => printTable(items, [['ID', (v) => v.id], ['NAME', (v) => v.name], ['USER', (v) => v.user_id ?? '-'], ['CREATED', (v) => v.created_at]]));
    });
  platformCommand(vaults.command('get').description('A vault and its credentials (targets and schemes only).'))
    .argument('<id>', 'the vault id (vlt_…)')
    .action(async (id: string, flags: ConnectionFlags) => {
      const client = clientFor(flags);
      const vault = await client.request<VaultView>('GET', `/v1/vaults/${encodeURIComponent(id)}`);
      const credentials = await client.list<CredentialView>(`/v1/vaults/${encodeURIComponent(id)}/credentials`);
      print(flags.json, { ...vault, credentials }, () => {
        printFields([['id', vault.id], ['name', vault.name], ['user', vault.user_id ?? '-'], ['created', vault.created_at]]);
        process.stdout.write('credentials:\n');
        printTable(credentials, [['ID', (c) => c.id], ['TARGET', (c) => c.target], ['SCHEME', (c) => c.auth_scheme], ['EXPIRES', (c) => c.expires_at]]);
      });
    });
  platformCommand(vaults.command('create').description('Create a vault: the operator\'s, or with --user one that user owns (only its sessions use it).'))
    .argument('<name>', 'the vault\'s name')
    .option('--user <id>', 'the user who owns the vault')
    .action(async (name: string, flags: ConnectionFlags & { user?: string }) => {
      const input: VaultInput = { name };
      const path = flags.user === undefined ? '/v1/vaults' : `/v1/users/${encodeURIComponent(flags.user)}/vaults`;
      const vault = await clientFor(flags).request<VaultView>('POST', path, { json: input });
      print(flags.json, vault, () => process.stdout.write(`vault ${vault.name} created${vault.user_id === null ? '' : ` for user ${vault.user_id}`}: ${vault.id}\n`));
    });
  platformCommand(vaults.command('add-credential').description('Add a credential to a vault; its secret is read from standard input (typed without echo, or piped).'))
    .argument('<vault>', 'the vault id (vlt_…)')
    .requiredOption('--target <url>', 'where the credential is sent: an origin (https://api.example.com) or a remote MCP server\'s URL')
    .option('--scheme <scheme>', 'bearer (stdin: the token), headers (stdin: the value of --header, or a JSON object of headers), oauth (stdin: a JSON object)', 'bearer')
    .option('--header <name>', 'with --scheme headers: the one header whose value stdin holds')
    .option('--name <display name>', 'a name to show for it')
    .action(async (vault: string, flags: CredentialFlags) => {
      if (!Object.hasOwn(SCHEMES, flags.scheme)) throw new UsageError(`--scheme ${flags.scheme} is not one: bearer, headers or oauth`);
      const scheme = flags.scheme as SchemeName;
      if (flags.header !== undefined && scheme !== 'headers') throw new UsageError('--header goes with --scheme headers');
      const client = clientFor(flags);
      const secret = await readSecret(`${wanted(scheme, flags.header)} for ${flags.target}: `, { whole: scheme !== 'bearer' && flags.header === undefined });
      if (secret.trim() === '') {
        throw new UsageError(`no secret on standard input: pipe in ${wanted(scheme, flags.header)} (e.g. printf '%s' "$TOKEN" | subako vaults add-credential ${vault} --target ${flags.target}), or run it on a terminal to type it; never as a flag`);
      }
      const input: CredentialInput = {
        target: flags.target, payload: credentialPayload(scheme, secret, flags.header), ...(flags.name !== undefined ? { display_name: flags.name } : {}),
      };
      const credential = await client.request<CredentialView>('POST', `/v1/vaults/${encodeURIComponent(vault)}/credentials`, { json: input });
      print(flags.json, credential, () => process.stdout.write(`credential ${credential.id} (${credential.auth_scheme}) for ${credential.target} added to ${vault}\n`));
    });
  platformCommand(vaults.command('delete').description('Delete a vault and its credentials (refused while in use).'))
    .argument('<id>', 'the vault id (vlt_…)')
    .action(async (id: string, flags: ConnectionFlags) => {
      await clientFor(flags).request('DELETE', `/v1/vaults/${encodeURIComponent(id)}`);
      print(flags.json, { deleted: id }, () => process.stdout.write(`deleted ${id}\n`));
    });
}
