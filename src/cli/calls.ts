/**
 * `subako calls list|create|get|tail`: the call log. `create` calls a session's tool (the call is logged);
 * `list` and `get` read one session's calls; `tail` follows the
 * live stream (`GET /v1/calls/stream`), filtered by agent, session, tool and outcome, one line per call
 * (or one JSON object per line with --json), reconnecting where it left off, until interrupted.
 */
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import type { AgentCallView, CallAnswer, CallInput, CallView } from '../server/api/index.js';
import { clientFor, platformCommand, type ConnectionFlags } from './api-client.js';
import { print, printFields, printTable } from './output.js';

const callColumns: [string, (c: CallView) => unknown][] = [
  ['STARTED', (c) => c.started_at], ['ID', (c) => c.id], ['SESSION', (c) => c.session_id], ['TOOL', (c) => c.tool], ['VIA', (c) => c.via],
  ['OUTCOME', (c) => (c.crash ? `${c.outcome} (${c.crash.reason})` : c.outcome)], ['MS', (c) => c.duration_ms],
];

export function registerCalls(program: Command): void {
  const calls = program.command('calls').description('The call log: list, make (create) and get a session\'s calls, tail the live stream.');
  platformCommand(calls.command('list').description('A session\'s calls, oldest first.'))
    .requiredOption('--session <id>', 'the session (ses_…)')
    .action(async (flags: ConnectionFlags & { session: string }) => {
      const items = await clientFor(flags).list<CallView>(`/v1/sessions/${encodeURIComponent(flags.session)}/calls`);
      print(flags.json, items, () => printTable(items, callColumns));
    });
  platformCommand(calls.command('create').description('Call one of a session\'s tools, as its MCP endpoint would; prints what the model saw.'))
    .requiredOption('--session <id>', 'the session (ses_…)')
    .argument('<tool>', 'the tool\'s name in the session')
    .argument('[arguments-json]', 'the arguments as a JSON object', '{}')
    .action(async (tool: string, argumentsJson: string, flags: ConnectionFlags & { session: string }) => {
      let args: unknown;
      try {
        args = JSON.parse(argumentsJson);
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error; // expected: not JSON
        throw new UsageError(`the arguments are not JSON (${error.message})`);
      }
      if (args === null || typeof args !== 'object' || Array.isArray(args)) throw new UsageError('the arguments must be a JSON object');
      const input: CallInput = { tool, arguments: args as Record<string, unknown> };
      const answer = await clientFor(flags).request<CallAnswer>('POST', `/v1/sessions/${encodeURIComponent(flags.session)}/calls`, { json: input });
      // A call that ran and ended as a tool error or a crash is the call's outcome (on stderr), not the command's failure.
      print(flags.json, answer, () => {
        for (const block of answer.result.content) process.stdout.write(`${block.type === 'text' ? String(block.text) : `[${block.type}]`}\n`);
        process.stderr.write(`${answer.call.id}: ${answer.call.crash ? `${answer.call.outcome} (${answer.call.crash.reason})` : answer.call.outcome} in ${answer.call.duration_ms} ms\n`);
      });
    });
  platformCommand(calls.command('get').description('One call: its arguments, what the model saw, stderr, egress.'))
    .argument('<session>', 'the session id (ses_…)')
    .argument('<call>', 'the call id (call_…)')
    .action(async (session: string, id: string, flags: ConnectionFlags) => {
      const call = await clientFor(flags).request<CallView>('GET', `/v1/sessions/${encodeURIComponent(session)}/calls/${encodeURIComponent(id)}`);
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
    .option('--status <outcome>', 'only calls with this outcome (running, ok, tool_error, crash, cancelled, invalid_arguments, denied, input_required, unknown)')
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
          const call = event.data as AgentCallView | null;
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
