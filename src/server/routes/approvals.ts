/**
 * /v1/sessions/{id}/approvals: the session's calls held for an operator's approval (tools under the agent policy
 * `require_approval`, and `require_user_approval` calls whose end user could not be asked), each readable whole
 * (its arguments exactly as the tool will receive them: approval-view.ts), and the decision on each;
 * /v1/approvals: those of every session, for an operator. Reading takes the session's token too (a client may show
 * that its call waits, and what it waits with); deciding takes an operator's API key only: the session is the
 * agent's side, and an approval it could give itself would be none, so its token is refused with a 403 that says
 * who decides.
 */
import { HttpError } from '../http-error.js';
import { route, type Route } from '../route.js';
import { ApprovalDecided, ApprovalDecisionInput, ApprovalView, HeldApprovalView, pageOf } from '../api/index.js';
import { APPROVAL_PAGE_QUERY, errorResponse as error } from '../schemas.js';
import { approvalDecisionView, heldApprovalView, mapPage, pageRequest, pendingApprovalView } from '../views.js';
import type { PageRequest } from '../../platform/index.js';

/** A page of held calls, each with its whole arguments: fewer per page than other lists. */
const DEFAULT_APPROVAL_PAGE = 16;

/** Bounded in bytes as every list is (PAGE_MAX_BYTES): a page holds at least one held call, whole. */
const approvalPage = (query: Record<string, string>): PageRequest =>
  ({ ...pageRequest(query), limit: query.limit ? Number(query.limit) : DEFAULT_APPROVAL_PAGE });

const APPROVALS_PAGE_SCHEMA = pageOf(ApprovalView);

/** Why a session's own token is refused: who decides instead. */
const OPERATOR_DECIDES = 'an operator decides: an API key with scope admin, through this API ("Authorization: Bearer <api key>") or the ' +
  'console; a session\'s token or capability URL never decides a call of its own (policy require_approval is an operator\'s; under ' +
  'require_user_approval the end user is asked through the MCP client\'s elicitation, and a call held instead waits for an operator)';

export function approvalRoutes(): Route[] {
  return [
    route({
      method: 'GET', path: '/v1/approvals', operationId: 'listAllApprovals', tag: 'calls', auth: 'api_key', query: APPROVAL_PAGE_QUERY,
      summary: 'Every call, of every session, that waits for an operator\'s approval, oldest first, with its whole arguments (what an operator has to decide).',
      responses: { 200: { description: 'The pending approvals.', schema: APPROVALS_PAGE_SCHEMA } },
      async handler({ platform, query }) {
        return { status: 200, body: mapPage(await platform.approvals.list(approvalPage(query)), pendingApprovalView) };
      },
    }),
    route({
      method: 'GET', path: '/v1/approvals/{approval_id}', operationId: 'getAnyApproval', tag: 'calls', auth: 'api_key',
      summary: 'One held call of any session, by its id alone (what an operator who was given the id reads): as ' +
        'GET /v1/sessions/{id}/approvals/{approval_id} shows it.',
      responses: {
        200: { description: 'The held call.', schema: HeldApprovalView },
        404: error('No such held call (or it was forgotten, a while after it expired).'),
      },
      async handler({ platform, params }) {
        return { status: 200, body: heldApprovalView(await platform.approvals.get(null, params.approval_id)) };
      },
    }),
    route({
      method: 'POST', path: '/v1/approvals/{approval_id}', operationId: 'decideAnyApproval', tag: 'calls', auth: 'api_key',
      summary: 'Approve or deny one held call of any session, by its id alone: as POST /v1/sessions/{id}/approvals/{approval_id} does.',
      body: { kind: 'json', schema: ApprovalDecisionInput, maxBytes: 4096 },
      responses: {
        200: { description: 'Decided.', schema: ApprovalDecided },
        403: error('A read-only API key: an admin key decides.'),
        404: error('No such held call.'),
        409: error('The approval was already decided, or ended at its deadline.'),
      },
      async handler({ platform, params, body, apiKey }) {
        const held = await platform.approvals.get(null, params.approval_id);
        const approval = await platform.approvals.decide(held.sessionId, params.approval_id, body.decision, apiKey!.id, body.reason);
        return { status: 200, body: { approval: approvalDecisionView(approval) } };
      },
    }),
    route({
      method: 'GET', path: '/v1/sessions/{id}/approvals', operationId: 'listApprovals', tag: 'calls', auth: 'api_key_or_session', query: APPROVAL_PAGE_QUERY,
      summary: 'The session\'s calls that wait for an operator\'s approval, oldest first, with their whole arguments. Each waits until it is ' +
        'decided or its expires_at passes (then it ends denied).',
      responses: {
        200: { description: 'The pending approvals.', schema: APPROVALS_PAGE_SCHEMA },
        404: error('No such session.'),
      },
      async handler({ platform, params, query }) {
        await platform.sessions.get(params.id);
        return { status: 200, body: mapPage(await platform.approvals.list(approvalPage(query), params.id), pendingApprovalView) };
      },
    }),
    route({
      method: 'GET', path: '/v1/sessions/{id}/approvals/{approval_id}', operationId: 'getApproval', tag: 'calls', auth: 'api_key_or_session',
      summary: 'One held call: exactly what will run if it is approved (the tool and its whole arguments, vault secrets hidden where ' +
        'hidden_secrets says), and its decision once made.',
      responses: {
        200: { description: 'The held call.', schema: HeldApprovalView },
        404: error('No such session, or no such held call in it (or it was forgotten, a while after it expired).'),
      },
      async handler({ platform, params }) {
        await platform.sessions.get(params.id);
        return { status: 200, body: heldApprovalView(await platform.approvals.get(params.id, params.approval_id)) };
      },
    }),
    route({
      method: 'POST', path: '/v1/sessions/{id}/approvals/{approval_id}', operationId: 'decideApproval', tag: 'calls', auth: 'api_key_or_session',
      summary: 'Approve or deny one held call, as an operator (an API key; a session\'s own token is refused). Approved, the call runs with ' +
        'exactly the arguments GET shows (its deadline starts afresh) and its caller gets its result; denied, it ends denied without running. ' +
        'The decision and the deciding API key are kept in the call\'s record.',
      body: { kind: 'json', schema: ApprovalDecisionInput, maxBytes: 4096 },
      responses: {
        200: { description: 'Decided.', schema: ApprovalDecided },
        403: error('The session\'s own token: an operator decides (or a read-only API key: an admin key decides).'),
        404: error('No such session, or no such pending approval in it.'),
        409: error('The approval was already decided, or ended at its deadline.'),
      },
      async handler({ platform, params, body, apiKey }) {
        // The session's token is let in (rather than told it is not a key) only to be told who decides.
        if (!apiKey) throw new HttpError(403, 'operator_approval_required', `the session's own token cannot decide approval ${params.approval_id}: ${OPERATOR_DECIDES}`);
        await platform.sessions.get(params.id);
        const approval = await platform.approvals.decide(params.id, params.approval_id, body.decision, apiKey.id, body.reason);
        return { status: 200, body: { approval: approvalDecisionView(approval) } };
      },
    }),
  ];
}
