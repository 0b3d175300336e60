/**
 * `subako vaults list|get|create|delete`: vaults of credentials. Credentials themselves are written through
 * the API (a secret on a command line would stay in the shell's history); `get` lists them, never a secret.
 */
import type { Command } from 'commander';
import type { CredentialView, VaultInput, VaultView } from '../server/api/index.js';
import { clientFor, platformCommand, type ConnectionFlags } from './api-client.js';
import { print, printFields, printTable } from './output.js';

export function registerVaults(program: Command): void {
  const vaults = program.command('vaults').description('Vaults of credentials: list, get (with its credentials, never a secret), create, delete.');
  platformCommand(vaults.command('list').description('List vaults.'))
    .action(async (flags: ConnectionFlags) => {
      const items = await clientFor(flags).list<VaultView>('/v1/vaults');
      print(flags.json, items, () => printTable(items, [['ID', (v) => v.id], ['NAME', (v) => v.name], ['CREATED', (v) => v.created_at]]));
    });
  platformCommand(vaults.command('get').description('A vault and its credentials (targets and schemes only).'))
    .argument('<id>', 'the vault id (vlt_…)')
    .action(async (id: string, flags: ConnectionFlags) => {
      const client = clientFor(flags);
      const vault = await client.request<VaultView>('GET', `/v1/vaults/${encodeURIComponent(id)}`);
      const credentials = await client.list<CredentialView>(`/v1/vaults/${encodeURIComponent(id)}/credentials`);
      print(flags.json, { ...vault, credentials }, () => {
        printFields([['id', vault.id], ['name', vault.name], ['created', vault.created_at]]);
        process.stdout.write('credentials:\n');
        printTable(credentials, [['ID', (c) => c.id], ['TARGET', (c) => c.target], ['SCHEME', (c) => c.auth_scheme], ['EXPIRES', (c) => c.expires_at]]);
      });
    });
  platformCommand(vaults.command('create').description('Create a vault.'))
    .argument('<name>', 'the vault\'s name')
    .action(async (name: string, flags: ConnectionFlags) => {
      const input: VaultInput = { name };
      const vault = await clientFor(flags).request<VaultView>('POST', '/v1/vaults', { json: input });
      print(flags.json, vault, () => process.stdout.write(`vault ${vault.name} created: ${vault.id}\n`));
    });
  platformCommand(vaults.command('delete').description('Delete a vault and its credentials (refused while in use).'))
    .argument('<id>', 'the vault id (vlt_…)')
    .action(async (id: string, flags: ConnectionFlags) => {
      await clientFor(flags).request('DELETE', `/v1/vaults/${encodeURIComponent(id)}`);
      print(flags.json, { deleted: id }, () => process.stdout.write(`deleted ${id}\n`));
    });
}
