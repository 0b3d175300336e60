/** /v1/agents, their versions and their sessions. */
import { route, type Route } from '../route.js';
import { AgentDriftView, AgentInput, AgentVersionView, AgentView, CreatedSessionView, DriftAcceptInput, SessionInput, SessionView, pageOf } from '../api/index.js';
import { PAGE_QUERY, errorResponse as error } from '../schemas.js';
import { agentVersionView, agentView, driftView, mapPage, pageRequest, sessionEndpoints, sessionView } from '../views.js';
import { HttpError } from '../http-error.js';

export function agentRoutes(): Route[] {
  return [
    route({
      method: 'POST', path: '/v1/agents', operationId: 'createAgent', tag: 'agents', auth: 'api_key',
      summary: 'Create an agent (its version 1). "latest" package and skill versions are pinned at publish time. A tool name that two sources share (letter case ignored), or that begins with a source\'s prefix <source>__, is published as <source>__<tool>; other names are kept. Sources whose prefixes overlap (a beside a_ or a__b) are refused (agent.source_prefix).',
      body: { kind: 'json', schema: AgentInput },
      responses: {
        201: { description: 'Created.', schema: AgentView }, 400: error('Bad input.'), 422: error('Unknown packages, skills or vaults; bad policies.'),
        502: error('A remote server whose definitions are pinned could not be listed (agent.pin_unreachable); nothing was published.'),
      },
      async handler({ platform, body }) {
        const { agent, version } = await platform.agents.create(body);
        return { status: 201, body: agentView(agent, version) };
      },
    }),
    route({
      method: 'GET', path: '/v1/agents', operationId: 'listAgents', tag: 'agents', auth: 'api_key',
      summary: 'List agents.', query: PAGE_QUERY,
      responses: { 200: { description: 'A page of agents.', schema: pageOf(AgentView) } },
      async handler({ platform, query }) {
        return { status: 200, body: mapPage(await platform.agents.list(pageRequest(query)), (a) => agentView(a)) };
      },
    }),
    route({
      method: 'GET', path: '/v1/agents/{id}', operationId: 'getAgent', tag: 'agents', auth: 'api_key',
      summary: 'Get an agent with its current version\'s spec.',
      responses: { 200: { description: 'The agent.', schema: AgentView }, 404: error('No such agent.') },
      async handler({ platform, params }) {
        const agent = await platform.agents.get(params.id);
        return { status: 200, body: agentView(agent, await platform.agents.version(agent.id, agent.currentVersion)) };
      },
    }),
    route({
      method: 'PUT', path: '/v1/agents/{id}', operationId: 'updateAgent', tag: 'agents', auth: 'api_key',
      summary: 'Publish a new version of the agent from a full spec. Sessions keep the version they started with.',
      body: { kind: 'json', schema: AgentInput },
      responses: {
        200: { description: 'The new version is current.', schema: AgentView }, 404: error('No such agent.'), 409: error('Changed meanwhile.'), 422: error('Bad references.'),
        502: error('A newly added remote server whose definitions are pinned could not be listed (agent.pin_unreachable); nothing was published.'),
      },
      async handler({ platform, params, body }) {
        const { agent, version } = await platform.agents.update(params.id, body);
        return { status: 200, body: agentView(agent, version) };
      },
    }),
    route({
      method: 'DELETE', path: '/v1/agents/{id}', operationId: 'deleteAgent', tag: 'agents', auth: 'api_key',
      summary: 'Delete an agent, its versions, its sessions (and their volumes) and its /volume/data.',
      responses: { 204: { description: 'Deleted.' }, 404: error('No such agent.') },
      async handler({ platform, params }) {
        await platform.agents.delete(params.id, (sessionId) => platform.sessions.notifyGone(sessionId));
        return { status: 204 };
      },
    }),
    route({
      method: 'GET', path: '/v1/agents/{id}/versions', operationId: 'listAgentVersions', tag: 'agents', auth: 'api_key',
      summary: 'List an agent\'s versions.', query: PAGE_QUERY,
      responses: { 200: { description: 'A page of versions.', schema: pageOf(AgentVersionView) }, 404: error('No such agent.') },
      async handler({ platform, params, query }) {
        return { status: 200, body: mapPage(await platform.agents.versions(params.id, pageRequest(query)), agentVersionView) };
      },
    }),
    route({
      method: 'GET', path: '/v1/agents/{id}/versions/{version}', operationId: 'getAgentVersion', tag: 'agents', auth: 'api_key',
      summary: 'Get one version of an agent.',
      responses: { 200: { description: 'The version.', schema: AgentVersionView }, 404: error('No such version.') },
      async handler({ platform, params }) {
        if (!/^[1-9]\d{0,8}$/.test(params.version)) throw new HttpError(404, 'not_found', `version ${params.version} of agent ${params.id} was not found`);
        return { status: 200, body: agentVersionView(await platform.agents.version(params.id, Number(params.version))) };
      },
    }),
    route({
      method: 'GET', path: '/v1/agents/{id}/drift', operationId: 'getAgentDrift', tag: 'agents', auth: 'api_key',
      summary: 'What the current version\'s remote servers with pinned definitions list now against the pins: per server the tools added, changed ' +
        '(old and new definitions, and which fields differ) and removed. Changed and added tools are not served until accepted.',
      responses: { 200: { description: 'The drift.', schema: AgentDriftView }, 404: error('No such agent.') },
      async handler({ platform, params }) {
        return { status: 200, body: driftView(await platform.agents.drift(params.id)) };
      },
    }),
    route({
      method: 'POST', path: '/v1/agents/{id}/drift/accept', operationId: 'acceptAgentDrift', tag: 'agents', auth: 'api_key',
      summary: 'Accept the drift reviewed: publish the next version with the current spec and its pinned servers\' tools pinned as they list now. ' +
        'Sessions started after it serve the new definitions; running sessions keep their version.',
      body: { kind: 'json', schema: DriftAcceptInput },
      responses: {
        200: { description: 'The new version is current.', schema: AgentView },
        404: error('No such agent.'),
        409: error('The listing is not the one reviewed (drift_changed), there is nothing to accept (no_drift), or the agent changed meanwhile.'),
        502: error('A pinned server cannot be listed now (agent.pin_unreachable).'),
      },
      async handler({ platform, params, body }) {
        const { agent, version } = await platform.agents.acceptDrift(params.id, body.digest);
        return { status: 200, body: agentView(agent, version) };
      },
    }),
    route({
      method: 'POST', path: '/v1/agents/{id}/sessions', operationId: 'createSession', tag: 'sessions', auth: 'api_key',
      summary: 'Start a session on the agent\'s current version. The answer holds the session token and MCP URLs, shown this once (an Idempotency-Key replay answers without them).',
      body: { kind: 'json', schema: SessionInput, optional: true }, replayOmits: ['token', 'mcp'],
      responses: { 201: { description: 'Created.', schema: CreatedSessionView }, 404: error('No such agent.'), 422: error('Unknown vaults or user, a vault the session may not use (session.foreign_vault: another user\'s), or bad TTL.') },
      async handler({ platform, params, body, baseUrl }) {
        const { session, token } = await platform.sessions.create(params.id, body);
        return { status: 201, body: { ...sessionView(session), token, mcp: sessionEndpoints(baseUrl, session, token) } };
      },
    }),
    route({
      method: 'GET', path: '/v1/agents/{id}/sessions', operationId: 'listSessions', tag: 'sessions', auth: 'api_key',
      summary: 'List an agent\'s sessions.', query: PAGE_QUERY,
      responses: { 200: { description: 'A page of sessions.', schema: pageOf(SessionView) }, 404: error('No such agent.') },
      async handler({ platform, params, query }) {
        return { status: 200, body: mapPage(await platform.sessions.list(params.id, pageRequest(query)), sessionView) };
      },
    }),
  ];
}
