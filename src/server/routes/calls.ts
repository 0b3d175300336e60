/**
 * /v1/calls: the call log across sessions — a search newest first, one call by id, and the live stream
 * (call-stream.ts). All three take the same filters and answer the same view (with the call's agent).
 */
import { z } from 'zod';
import type { CallFilter } from '../../platform/index.js';
import type { JsonSchema } from '../../tool.js';
import { STREAMS_PER_KEY, type CallStreams } from '../call-stream.js';
import { rawRoute, route, type Route } from '../route.js';
import { AgentCallView, CallOutcome, CallStatsView, CallStatsWindowName, pageOf } from '../api/index.js';
import { jsonSchemaOf } from '../json-schema-of.js';
import { PAGE_QUERY, errorResponse as error } from '../schemas.js';
import { callStatsView, callView, mapPage, pageRequest } from '../views.js';

const id = { type: 'string', minLength: 1, maxLength: 128 } as const;
const outcomes = jsonSchemaOf(CallOutcome);

export const CALL_FILTER_QUERY: Record<string, JsonSchema> = {
  agent: { ...id, description: 'Only calls of this agent\'s sessions (an agent id).' },
  session: { ...id, description: 'Only calls of this session.' },
  tool: { ...id, description: 'Only calls of this tool (its published name).' },
  status: { ...outcomes, description: 'Only calls with this outcome (`running` for calls not ended yet).' },
};

export function callFilter(query: Record<string, string>): CallFilter {
  return {
    ...(query.agent ? { agentId: query.agent } : {}),
    ...(query.session ? { sessionId: query.session } : {}),
    ...(query.tool ? { tool: query.tool } : {}),
    // The router checked the value against the status parameter's schema: one of the outcomes.
    ...(query.status ? { outcome: query.status as CallOutcome } : {}),
  };
}

export function callRoutes(streams: CallStreams): Route[] {
  return [
    rawRoute({
      // Before /v1/calls/{id}: the router takes the first route whose path matches.
      method: 'GET', path: '/v1/calls/stream', operationId: 'streamCalls', tag: 'calls', auth: 'api_key', raw: true,
      summary: 'The call log live, as Server-Sent Events: every call when it starts (outcome running) and when it ends, as "event: call" ' +
        'with the same view as GET /v1/calls. Each event has an id; reconnect with Last-Event-ID to get what was missed, or an "event: reset" ' +
        'when that is no longer possible (reload the list). A comment line every 15 s keeps the connection alive. The stream lives as long as ' +
        'its key: within about a second of the key\'s revocation it ends with an "event: end" naming the reason. One key holds at most ' +
        `${STREAMS_PER_KEY} streams; the last ${STREAMS_PER_KEY} places are kept for admin keys.`,
      query: CALL_FILTER_QUERY,
      responses: {
        200: { description: 'The stream (text/event-stream); each data line is one call.', contentType: 'text/event-stream', schema: z.string() },
        429: error('This key holds as many streams as one key may; close one first.'),
        503: error('As many streams are open as the server holds (or, for a read key, as read keys may hold together); retry after Retry-After.'),
      },
      async handler({ req, res, query, signal, apiKey }) {
        const lastEventId = req.headers['last-event-id'];
        await streams.serve(res, apiKey!, callFilter(query), typeof lastEventId === 'string' ? lastEventId : undefined, signal);
        return null;
      },
    }),
    route({
      method: 'GET', path: '/v1/calls', operationId: 'searchCalls', tag: 'calls', auth: 'api_key',
      summary: 'Calls of every session, newest first, narrowed by agent, session, tool and status.',
      query: { ...PAGE_QUERY, ...CALL_FILTER_QUERY },
      responses: { 200: { description: 'A page of calls.', schema: pageOf(AgentCallView) } },
      async handler({ platform, query }) {
        const page = await platform.calls.search(callFilter(query), pageRequest(query));
        return { status: 200, body: mapPage(page, ({ call, agentId }) => callView(call, agentId)) };
      },
    }),
    route({
      // Before /v1/calls/{id}, as the stream is.
      method: 'GET', path: '/v1/calls/stats', operationId: 'getCallStats', tag: 'calls', auth: 'api_key',
      summary: 'The call log over the last hour (by minute) or the last day (by hour): calls and errors per bucket, and per tool and per ' +
        'agent their calls, errors and p50/p95 duration. Counted by the database from the calls kept.',
      query: { window: { ...jsonSchemaOf(CallStatsWindowName), description: 'hour (the default) or day.' } },
      responses: { 200: { description: 'The window\'s stats.', schema: CallStatsView } },
      async handler({ platform, query }) {
        const stats = await platform.calls.stats((query.window ?? 'hour') as CallStatsWindowName);
        return { status: 200, body: callStatsView(stats) };
      },
    }),
    route({
      method: 'GET', path: '/v1/calls/{id}', operationId: 'getCallById', tag: 'calls', auth: 'api_key',
      summary: 'One call record, whichever session made it.',
      responses: { 200: { description: 'The call.', schema: AgentCallView }, 404: error('No such call.') },
      async handler({ platform, params }) {
        const { call, agentId } = await platform.calls.find(params.id);
        return { status: 200, body: callView(call, agentId) };
      },
    }),
  ];
}
