/**
 * `subako sessions list|get|create|delete`: an agent's sessions. `create` prints the session's MCP
 * endpoint both ways (the capability URL, and the URL with its bearer token): they are shown this once.
 */
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import type { CreatedSessionView, SessionInput, SessionView } from '../server/api/index.js';
import { clientFor, platformCommand, type ConnectionFlags } from './api-client.js';
import { print, printFields, printTable } from './output.js';

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function registerSessions(program: Command): void {
  const sessions = program.command('sessions').description('Agents\' sessions: list, get, create (start), delete (end).');
  platformCommand(sessions.command('list').description('List an agent\'s sessions, or a user\'s.'))
    .option('--agent <id>', 'the agent (agt_…)')
    .option('--user <id>', 'the user the sessions act for')
    .action(async (flags: ConnectionFlags & { agent?: string; user?: string }) => {
      if ((flags.agent === undefined) === (flags.user === undefined)) throw new UsageError('name the sessions to list: --agent ID or --user ID (one of them)');
      const path = flags.agent !== undefined ? `/v1/agents/${encodeURIComponent(flags.agent)}/sessions` : `/v1/users/${encodeURIComponent(flags.user!)}/sessions`;
      const items = await clientFor(flags).list<SessionView>(path);
      print(flags.json, items, () => printTable(items, [
        ['ID', (s) => s.id], ['AGENT', (s) => `${s.agent_id} (version ${s.agent_version})`], ['USER', (s) => s.user_id ?? '-'], ['CREATED', (s) => s.created_at], ['EXPIRES', (s) => s.expires_at],
      ]));
    });
  platformCommand(sessions.command('get').description('A session (without its token).'))
    .argument('<id>', 'the session id (ses_…)')
    .action(async (id: string, flags: ConnectionFlags) => {
      const session = await clientFor(flags).request<SessionView>('GET', `/v1/sessions/${encodeURIComponent(id)}`);
      print(flags.json, session, () => printFields([
        ['id', session.id], ['agent', `${session.agent_id} (version ${session.agent_version})`], ['user', session.user_id ?? '-'],
        ['vaults', session.vault_ids.join(', ') || (session.user_id !== null ? '(every vault of the user)' : '-')],
        ['created', session.created_at], ['expires', session.expires_at],
      ]));
    });
  platformCommand(sessions.command('create').description('Start a session of an agent; prints its MCP URLs once.'))
    .requiredOption('--agent <id>', 'the agent (agt_…)')
    .option('--ttl-seconds <n>', 'how long the session lives')
    .option('--vault <id>', 'a vault whose credentials the session may use (repeatable); for a --user session, by default every vault of the user', collect, [])
    .option('--user <id>', 'the end user the session acts for: it uses that user\'s vaults, never another user\'s')
    .action(async (flags: ConnectionFlags & { agent: string; ttlSeconds?: string; vault: string[]; user?: string }) => {
      if (flags.ttlSeconds !== undefined && !/^[1-9][0-9]{0,8}$/.test(flags.ttlSeconds)) throw new UsageError(`--ttl-seconds is ${JSON.stringify(flags.ttlSeconds)}; it takes a whole number of seconds`);
      const body: SessionInput = {};
      if (flags.ttlSeconds) body.ttl_seconds = Number(flags.ttlSeconds);
      if (flags.vault.length > 0) body.vault_ids = flags.vault;
      if (flags.user !== undefined) body.user_id = flags.user;
      const session = await clientFor(flags).request<CreatedSessionView>('POST', `/v1/agents/${encodeURIComponent(flags.agent)}/sessions`, { json: body });
      print(flags.json, session, () => {
        printFields([['id', session.id], ...(session.user_id !== null ? [['user', session.user_id] as [string, string]] : []), ['expires', session.expires_at]]);
        process.stdout.write(
          '\nThe MCP endpoint, shown only this once (either form; each is a credential):\n' +
          `  capability URL: ${session.mcp?.capability_url}\n` +
          `  URL:            ${session.mcp?.url}\n  header:         Authorization: ${session.mcp?.authorization}\n`,
        );
      });
    });
  platformCommand(sessions.command('delete').description('End a session: its /volume/tmp and call records are removed.'))
    .argument('<id>', 'the session id (ses_…)')
    .action(async (id: string, flags: ConnectionFlags) => {
      await clientFor(flags).request('DELETE', `/v1/sessions/${encodeURIComponent(id)}`);
      print(flags.json, { deleted: id }, () => process.stdout.write(`deleted ${id}\n`));
    });
}
