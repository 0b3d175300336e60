/**
 * `subako calls list|get|tail`: the call log. `list` and `get` read one session's calls; `tail` follows the
 * live stream (`GET /v1/calls/stream`), filtered by agent, session, tool and outcome, one line per call
 * (or one JSON object per line with --json), reconnecting where it left off, until interrupted.
 */
import type { Command } from 'commander';
import { clientFor, platformCommand, type ConnectionFlags } from './api-client.js';
import { print, printFields, printTable } from './output.js';

interface Call {
  id: string; session_id: string; via: string; tool: string; arguments: unknown; outcome: string;
  crash: { reason: string; message: string } | null; model: unknown[]; stderr_tail: string; egress: unknown[];
  duration_ms: number | null; started_at: string;
}

const callColumns: [string, (c: Call) => unknown][] = [
  ['STARTED', (c) => c.started_at], ['ID', (c) => c.id], ['SESSION', (c) => c.session_id], ['TOOL', (c) => c.tool], ['VIA', (c) => c.via],
  ['OUTCOME', (c) => (c.crash ? `${c.outcome} (${c.crash.reason})` : c.outcome)], ['MS', (c) => c.duration_ms],
];

export function registerCalls(program: Command): void {
  const calls = program.command('calls').description('The call log: list and get a session\'s calls, tail the live stream.');
  platformCommand(calls.command('list').description('A session\'s calls, oldest first.'))
    .requiredOption('--session <id>', 'the session (ses_…)')
    .action(async (flags: ConnectionFlags & { session: string }) => {
      const items = await clientFor(flags).list<Call>(`/v1/sessions/${encodeURIComponent(flags.session)}/calls`);
      print(flags.json, items, () => printTable(items, callColumns));
    });
  platformCommand(calls.command('get').description('One call: its arguments, what the model saw, stderr, egress.'))
    .argument('<session>', 'the session id (ses_…)')
    .argument('<call>', 'the call id (call_…)')
    .action(async (session: string, id: string, flags: ConnectionFlags) => {
      const call = await clientFor(flags).request<Call>('GET', `/v1/sessions/${encodeURIComponent(session)}/calls/${encodeURIComponent(id)}`);
      print(flags.json, call, () => printFields([
        ['id', call.id], ['session', call.session_id], ['tool', call.tool], ['via', call.via], ['outcome', call.outcome],
        ['crash', call.crash ? `${call.crash.reason}: ${call.crash.message}` : null], ['duration ms', call.duration_ms], ['started', call.started_at],
        ['arguments', call.arguments], ['model saw', call.model], ['stderr', call.stderr_tail || null], ['egress', call.egress],
      ]));
    });
  platformCommand(calls.command('tail').description('Follow calls as they start and finish, until interrupted.'))
    .option('--agent <id>', 'only this agent\'s calls')
    .option('--session <id>', 'only this session\'s calls')
    .option('--tool <name>', 'only calls of this tool')
    .option('--status <outcome>', 'only calls with this outcome (running, ok, tool_error, crash, cancelled, invalid_arguments, denied)')
    .action(async (flags: ConnectionFlags & { agent?: string; session?: string; tool?: string; status?: string }) => {
      const client = clientFor(flags);
      const stop = new AbortController();
      const onSignal = (): void => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      if (!flags.json) process.stdout.write(`${callColumns.map(([header]) => header).join('  ')}\n`);
      try {
        const query = { agent: flags.agent, session: flags.session, tool: flags.tool, status: flags.status };
        // A server restart takes a few seconds: keep trying for about a minute before giving up.
        for await (const event of client.events('/v1/calls/stream', query, stop.signal, 30)) {
          if (event.event === 'reset') {
            process.stderr.write('subako: the stream could not resume where it left off (the server restarted?); calls in between may be missing: see subako calls list\n');
            continue;
          }
          const call = event.data as Call;
          if (call === null || typeof call !== 'object' || typeof call.id !== 'string') continue;
          if (flags.json) process.stdout.write(`${JSON.stringify(call)}\n`);
          else process.stdout.write(`${callColumns.map(([, cell]) => String(cell(call) ?? '-')).join('  ')}\n`);
        }
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
}
