/**
 * `subako keys list|create|revoke`: the server's API keys. A new key is printed once; lists show each key's
 * id, prefix, scope and times, never a secret. Changing keys takes an admin key.
 */
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import type { CreatedKeyView, KeyInput, KeyView } from '../server/api/index.js';
import { clientFor, platformCommand, type ConnectionFlags } from './api-client.js';
import { print, printFields, printTable } from './output.js';

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('The server\'s API keys: list, create (admin or read-only), revoke.');
  platformCommand(keys.command('list').description('List API keys (never their secrets).'))
    .action(async (flags: ConnectionFlags) => {
      const items = await clientFor(flags).list<KeyView>('/v1/keys');
      print(flags.json, items, () => printTable(items, [
        ['ID', (k) => k.id], ['NAME', (k) => k.name], ['PREFIX', (k) => `${k.prefix}…`], ['SCOPE', (k) => k.scope],
        ['CREATED', (k) => k.created_at], ['LAST USED', (k) => k.last_used_at], ['REVOKED', (k) => k.revoked_at],
      ]));
    });
  platformCommand(keys.command('create').description('Make an API key; it is printed this once.'))
    .requiredOption('--name <name>', 'what the key is for (e.g. prometheus)')
    .option('--scope <scope>', 'admin (anything) or read (GET requests only)', 'admin')
    .action(async (flags: ConnectionFlags & { name: string; scope: string }) => {
      if (flags.scope !== 'admin' && flags.scope !== 'read') throw new UsageError(`--scope is ${JSON.stringify(flags.scope)}; it takes admin or read`);
      const input: KeyInput = { name: flags.name, scope: flags.scope };
      const key = await clientFor(flags).request<CreatedKeyView>('POST', '/v1/keys', { json: input });
      print(flags.json, key, () => {
        printFields([['id', key.id], ['name', key.name], ['scope', key.scope]]);
        process.stdout.write(`\nThe key, shown only this once; keep it:\n  ${key.key}\n`);
      });
    });
  platformCommand(keys.command('revoke').description('Revoke an API key: it authenticates nothing from now on.'))
    .argument('<id>', 'the key\'s id (key_…), as subako keys list shows it')
    .action(async (id: string, flags: ConnectionFlags) => {
      const key = await clientFor(flags).request<KeyView>('DELETE', `/v1/keys/${encodeURIComponent(id)}`);
      print(flags.json, key, () => process.stdout.write(`revoked ${key.id} (${key.name})\n`));
    });
}
