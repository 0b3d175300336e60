/**
 * `subako users list|create|show|delete`: end users, under the ids the operator's application chooses. `show`
 * prints the user with its vaults and sessions; `delete` removes the user, its vaults and its sessions. A user's
 * vault is made with `subako vaults create NAME --user ID`, a session for it with `subako sessions create --user ID`.
 * `connections` lists the accounts a user connected themselves (never a token); `disconnect` ends one, revoking it.
 */
import type { Command } from 'commander';
import type { ConnectionView, DisconnectedView, SessionView, UserInput, UserView, VaultView } from '../server/api/index.js';
import { clientFor, platformCommand, type ConnectionFlags } from './api-client.js';
import { print, printFields, printTable } from './output.js';

const userPath = (id: string): string => `/v1/users/${encodeURIComponent(id)}`;

export function registerUsers(program: Command): void {
  const users = program.command('users').description('End users (ids your application chooses): list, create, show (with vaults and sessions), delete, connections, disconnect.');
  platformCommand(users.command('list').description('List users, by id.'))
    .action(async (flags: ConnectionFlags) => {
      const items = await clientFor(flags).list<UserView>('/v1/users');
      print(flags.json, items, () => printTable(items, [
        ['ID', (u) => u.id], ['NAME', (u) => u.display_name ?? '-'], ['EMAIL', (u) => u.email ?? '-'], ['CREATED', (u) => u.created_at],
      ]));
    });
  platformCommand(users.command('create').description('Add a user under the id your application gives it.'))
    .argument('<id>', 'the user\'s id: 1-128 of A-Z a-z 0-9 . _ - @ : | + =, beginning with a letter or digit')
    .option('--display-name <name>', 'a name to show')
    .option('--email <address>', 'an address to show (subako sends nothing to it)')
    .action(async (id: string, flags: ConnectionFlags & { displayName?: string; email?: string }) => {
      const input: UserInput = { id, ...(flags.displayName !== undefined ? { display_name: flags.displayName } : {}), ...(flags.email !== undefined ? { email: flags.email } : {}) };
      const user = await clientFor(flags).request<UserView>('POST', '/v1/users', { json: input });
      print(flags.json, user, () => process.stdout.write(`user ${user.id} created\n`));
    });
  platformCommand(users.command('show').description('A user, its vaults and its sessions.'))
    .argument('<id>', 'the user\'s id')
    .action(async (id: string, flags: ConnectionFlags) => {
      const client = clientFor(flags);
      const user = await client.request<UserView>('GET', userPath(id));
      const vaults = await client.list<VaultView>(`${userPath(id)}/vaults`);
      const sessions = await client.list<SessionView>(`${userPath(id)}/sessions`);
      print(flags.json, { ...user, vaults, sessions }, () => {
        printFields([['id', user.id], ['name', user.display_name ?? '-'], ['email', user.email ?? '-'], ['created', user.created_at]]);
        process.stdout.write('vaults:\n');
        printTable(vaults, [['ID', (v) => v.id], ['NAME', (v) => v.name], ['CREATED', (v) => v.created_at]]);
        process.stdout.write('sessions:\n');
        printTable(sessions, [['ID', (s) => s.id], ['AGENT', (s) => `${s.agent_id} (version ${s.agent_version})`], ['EXPIRES', (s) => s.expires_at]]);
      });
    });
  platformCommand(users.command('delete').description('Delete a user, its vaults with their credentials, and its sessions (ended at once).'))
    .argument('<id>', 'the user\'s id')
    .action(async (id: string, flags: ConnectionFlags) => {
      await clientFor(flags).request('DELETE', userPath(id));
      print(flags.json, { deleted: id }, () => process.stdout.write(`deleted user ${id}, its vaults and its sessions\n`));
    });
  platformCommand(users.command('connections').description('The accounts a user connected themselves for agents\' connections: state, scopes, expiry (never a token).'))
    .argument('<user>', 'the user\'s id')
    .action(async (id: string, flags: ConnectionFlags) => {
      const { items } = await clientFor(flags).request<{ items: ConnectionView[] }>('GET', `${userPath(id)}/connections`);
      print(flags.json, items, () => printTable(items, [
        ['ID', (c) => c.id], ['NAME', (c) => c.name], ['STATE', (c) => c.status], ['SCOPES', (c) => c.scopes.join(' ') || '-'],
        ['FOR', (c) => c.target], ['EXPIRES', (c) => c.expires_at ?? '-'],
      ]));
    });
  platformCommand(users.command('disconnect').description('End a user\'s connection: its tokens revoked at the authorization server (RFC 7009) and deleted.'))
    .argument('<user>', 'the user\'s id')
    .argument('<connection>', 'the connection\'s name or id (subako users connections <user>)')
    .action(async (id: string, connection: string, flags: ConnectionFlags) => {
      const done = await clientFor(flags).request<DisconnectedView>('DELETE', `${userPath(id)}/connections/${encodeURIComponent(connection)}`);
      print(flags.json, done, () => process.stdout.write(`disconnected ${connection} for user ${id}: ${done.revocation}\n`));
    });
}
