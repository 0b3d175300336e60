/**
 * `subako approvals list|show|approve|deny`: the calls held for an operator's decision (tools under the agent
 * policy `require_approval`, and `require_user_approval` calls whose end user could not be asked), over
 * /v1/approvals. `show` prints the whole arguments exactly as the approver is shown them (vault secrets hidden
 * where hidden_secrets says), so what is approved from the terminal is what the console would show.
 * Exit 0 decided (or shown), 1 refused (an unknown id, one already decided, a read-only key), 2 usage.
 */
import type { Command } from 'commander';
import type { ApprovalDecided, ApprovalDecisionInput, ApprovalView, HeldApprovalView, SessionView } from '../server/api/index.js';
import { ApiError, clientFor, platformCommand, type ApiClient, type ConnectionFlags } from './api-client.js';
import { print, spanText, printFields, printTable } from './output.js';

/** The most held calls the API answers per page (each holds its whole arguments). */
const APPROVAL_PAGE = 32;

const approvalPath = (id: string): string => `/v1/approvals/${encodeURIComponent(id)}`;

/** The server's answer for an id it does not hold, said as what to do instead. */
async function named<T>(id: string, client: ApiClient, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    throw new ApiError('approval_not_found', `no held call ${id} on ${client.server} (a decided one is forgotten a while after it expired); subako approvals list shows those waiting`, 404);
  }
}

/** Each session's agent, one request per distinct session (a page holds few held calls). */
async function agentsOf(client: ApiClient, items: readonly ApprovalView[]): Promise<Map<string, string>> {
  const agents = new Map<string, string>();
  for (const sessionId of new Set(items.map((a) => a.session_id))) {
    const session = await client.request<SessionView>('GET', `/v1/sessions/${encodeURIComponent(sessionId)}`).catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 404) return null; // expected: the session ended since the list was read
      throw error;
    });
    if (session) agents.set(sessionId, session.agent_id);
  }
  return agents;
}

export function registerApprovals(program: Command): void {
  const approvals = program.command('approvals').description('Calls held for an operator\'s approval: list, show, approve, deny.');
  platformCommand(approvals.command('list').description('The calls waiting for a decision, oldest first, of every session (or one).'))
    .option('--session <id>', 'only this session\'s (ses_…)')
    .action(async (flags: ConnectionFlags & { session?: string }) => {
      const client = clientFor(flags);
      const path = flags.session === undefined ? '/v1/approvals' : `/v1/sessions/${encodeURIComponent(flags.session)}/approvals`;
      const items = await client.list<ApprovalView>(path, {}, APPROVAL_PAGE);
      if (flags.json) {
        print(true, items, () => undefined);
        return;
      }
      const agents = await agentsOf(client, items);
      const now = Date.now();
      printTable(items, [
        ['ID', (a) => a.id], ['TOOL', (a) => a.tool], ['AGENT', (a) => agents.get(a.session_id)], ['SESSION', (a) => a.session_id],
        ['AGE', (a) => spanText(now - Date.parse(a.created_at))], ['EXPIRES IN', (a) => spanText(Date.parse(a.expires_at) - now)],
      ], '(no calls are waiting for approval)');
    });
  platformCommand(approvals.command('show').description('One held call: the tool, and the whole arguments it runs with if approved.'))
    .argument('<id>', 'the approval id (from subako approvals list)')
    .action(async (id: string, flags: ConnectionFlags) => {
      const client = clientFor(flags);
      const held = await named(id, client, () => client.request<HeldApprovalView>('GET', approvalPath(id)));
      print(flags.json, held, () => {
        printFields([
          ['id', held.id], ['tool', held.tool], ['session', held.session_id], ['call', held.call_id], ['decision', held.decision],
          ['created', held.created_at], ['expires', held.expires_at],
          ...(held.decided_by !== null ? [['decided by', `${held.decided_by} at ${held.decided_at}`] as [string, unknown]] : []),
          ...(held.reason !== null ? [['reason', held.reason] as [string, unknown]] : []),
          ['hidden secrets', held.hidden_secrets.length > 0 ? held.hidden_secrets.join(', ') : '(none)'],
        ]);
        // Whole and indented, never cut: this is what runs.
        process.stdout.write(`arguments:\n${JSON.stringify(held.arguments, null, 2)}\n`);
      });
    });
  for (const decision of ['approve', 'deny'] as const) {
    platformCommand(approvals.command(decision).description(decision === 'approve'
      ? 'Approve a held call: it runs with exactly the arguments `show` prints.'
      : 'Deny a held call: it ends denied without running; --reason is what the model reads of why.'))
      .argument('<id>', 'the approval id (from subako approvals list)')
      .option('--reason <text>', 'why, kept with the decision (on a denial, the model reads it)')
      .action(async (id: string, flags: ConnectionFlags & { reason?: string }) => {
        const client = clientFor(flags);
        const input: ApprovalDecisionInput = { decision, ...(flags.reason !== undefined ? { reason: flags.reason } : {}) };
        const decided = await named(id, client, () => client.request<ApprovalDecided>('POST', approvalPath(id), { json: input }));
        print(flags.json, decided, () => process.stdout.write(`${id} ${decided.approval.decision}\n`));
      });
  }
}
