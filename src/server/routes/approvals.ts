/**
 * /v1/sessions/{id}/approvals: the session's calls held for a person's approval (tools under the agent policy
 * `require_approval`, called by a client that cannot ask its person itself), and the decision on each;
 * /v1/approvals: those of every session, for an operator. Listing
 * takes the session's token too (a client may show that its call waits); deciding takes an API key only: the
 * session is the agent's side, and an approval it could give itself would be none.
 */
import type { Route } from '../route.js';
import { APPROVAL_DECISION_SCHEMA, APPROVAL_SCHEMA, CALL_APPROVAL_SCHEMA, ERROR_SCHEMA } from '../schemas.js';
import { approvalDecisionView, pendingApprovalView } from '../views.js';

const error = (description: string) => ({ description, schema: ERROR_SCHEMA });

export function approvalRoutes(): Route[] {
  return [
    {
      method: 'GET', path: '/v1/approvals', operationId: 'listAllApprovals', tag: 'calls', auth: 'api_key',
      summary: 'Every call, of every session, that waits for a person\'s approval, oldest first (what an operator has to decide).',
      responses: { 200: { description: 'The pending approvals.', schema: { type: 'object', required: ['items'], properties: { items: { type: 'array', items: APPROVAL_SCHEMA } } } } },
      async handler({ platform }) {
        return { status: 200, body: { items: (await platform.approvals.list()).map(pendingApprovalView) } };
      },
    },
    {
      method: 'GET', path: '/v1/sessions/{id}/approvals', operationId: 'listApprovals', tag: 'calls', auth: 'api_key_or_session',
      summary: 'The session\'s calls that wait for a person\'s approval, oldest first. Each waits until it is decided or its expires_at passes (then it ends denied).',
      responses: {
        200: { description: 'The pending approvals.', schema: { type: 'object', required: ['items'], properties: { items: { type: 'array', items: APPROVAL_SCHEMA } } } },
        404: error('No such session.'),
      },
      async handler({ platform, params }) {
        await platform.sessions.get(params.id);
        return { status: 200, body: { items: (await platform.approvals.list(params.id)).map(pendingApprovalView) } };
      },
    },
    {
      method: 'POST', path: '/v1/sessions/{id}/approvals/{approval_id}', operationId: 'decideApproval', tag: 'calls', auth: 'api_key',
      summary: 'Approve or deny one held call. Approved, the call runs (its deadline starts afresh) and its caller gets its result; denied, it ends ' +
        'denied without running. The decision and the deciding API key are kept in the call\'s record.',
      body: { kind: 'json', schema: APPROVAL_DECISION_SCHEMA, maxBytes: 4096 },
      responses: {
        200: { description: 'Decided.', schema: { type: 'object', required: ['approval'], properties: { approval: CALL_APPROVAL_SCHEMA } } },
        404: error('No such session, or no such pending approval in it.'),
        409: error('The approval was already decided, or ended at its deadline.'),
      },
      async handler({ platform, params, body, apiKey }) {
        await platform.sessions.get(params.id);
        const { decision } = body as { decision: 'approve' | 'deny' };
        const approval = await platform.approvals.decide(params.id, params.approval_id, decision, apiKey!.id);
        return { status: 200, body: { approval: approvalDecisionView(approval) } };
      },
    },
  ];
}
