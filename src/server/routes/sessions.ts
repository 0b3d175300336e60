/** /v1/sessions/{id}: the session, its tools, its calls. Call routes take an API key or the session's own token. */
import { route, type Route } from '../route.js';
import { CallAnswer, CallInput, CallView, SessionTools, SessionView, pageOf } from '../api/index.js';
import { PAGE_QUERY, errorResponse as error } from '../schemas.js';
import { callView, mapPage, pageRequest, sessionView, toolView } from '../views.js';
import { HttpError } from '../http-error.js';
import { CallCancelledError } from '../../tool.js';
import { CallError } from '../../mcp/index.js';
import type { LoggedCall } from '../../platform/index.js';

export function sessionRoutes(): Route[] {
  return [
    route({
      method: 'GET', path: '/v1/sessions/{id}', operationId: 'getSession', tag: 'sessions', auth: 'api_key_or_session',
      summary: 'Get a session (without its token).',
      responses: { 200: { description: 'The session.', schema: SessionView }, 404: error('No such session, or it expired.') },
      async handler({ platform, params }) {
        return { status: 200, body: sessionView(await platform.sessions.get(params.id)) };
      },
    }),
    route({
      method: 'DELETE', path: '/v1/sessions/{id}', operationId: 'deleteSession', tag: 'sessions', auth: 'api_key',
      summary: 'End a session: its /volume/tmp and call records are removed; the agent\'s /volume/data stays.',
      responses: { 204: { description: 'Deleted.' }, 404: error('No such session.') },
      async handler({ platform, params }) {
        await platform.sessions.delete(params.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'GET', path: '/v1/sessions/{id}/tools', operationId: 'listSessionTools', tag: 'sessions', auth: 'api_key_or_session',
      summary: 'The session\'s toolbox: function tools and remote servers\' allowed tools, under their published names.',
      responses: {
        200: { description: 'The tools.', schema: SessionTools },
        404: error('No such session.'),
      },
      async handler({ platform, params }) {
        const session = await platform.sessions.get(params.id);
        const box = await platform.toolboxes.forSession(session);
        return {
          status: 200,
          body: {
            items: Object.entries(box.tools).map(([name, tool]) => toolView(name, tool)), warnings: box.warnings,
            ...(box.withheld.size > 0 ? { withheld: [...box.withheld].map(([name, reason]) => ({ name, reason })) } : {}),
            ...(box.listed ? { listed: [...box.listed] } : {}),
          },
        };
      },
    }),
    route({
      method: 'POST', path: '/v1/sessions/{id}/calls', operationId: 'callTool', tag: 'calls', auth: 'api_key_or_session',
      summary: 'Call one of the session\'s tools, as its MCP endpoint would. The call is logged; a tool failure is a result with isError, not an HTTP error. ' +
        'Arguments are checked by the tool\'s source, the same from every entry point: a remote MCP tool refuses arguments that do not match its input schema ' +
        '(outcome invalid_arguments, nothing sent), a function package gets them as they are (its guest validates). ' +
        'A call waits its turn while its session or agent runs as many calls as it may (its deadline counts the wait); past the queue it is refused with 429. ' +
        'Every call has exactly one outcome: once the tool ran, its outcome is the answer (200) even when the database cannot take the call\'s end just ' +
        'then (end_pending: the server writes it once the database is back); a 503 means nothing ran. A call cut off mid-way has the outcome unknown, ' +
        'never a guess. Send an Idempotency-Key to retry safely: a retry is answered the first call\'s outcome instead of running again.',
      body: { kind: 'json', schema: CallInput, maxBytes: 4 * 1024 * 1024 },
      ownIdempotencyKey: 'Makes the call safe to retry: a retry with the same key, the same tool and the same arguments, in the same session, is answered ' +
        'the first call\'s outcome (replayed: true, header Idempotent-Replayed: true) instead of running the tool again, through REST or the session\'s ' +
        'MCP endpoint alike (its _meta field io.subako/idempotency-key). A retry while the first call still runs waits for it, up to the call deadline ' +
        '(then 409 idempotency_in_progress: retry later). The same key with another tool or other arguments is refused (422 idempotency_key_reused). ' +
        'A first call that ended before its tool ran (refused, denied, past its deadline in the queue) leaves the key free. ' +
        'Keys are kept 24 h from their first use. 1-255 visible ASCII characters (a UUID).',
      responses: {
        200: { description: 'The call ran (or, for a retry with its Idempotency-Key, had run); its record and the result the model would see.', schema: CallAnswer },
        400: error('The Idempotency-Key is not 1-255 visible ASCII characters (bad_idempotency_key); nothing ran.'),
        404: error('No such session or tool.'),
        409: error('The tool is withheld (tool_withheld): its remote server now lists a changed definition its agent version did not pin; nothing ran. Or: the first call with this Idempotency-Key is still running (idempotency_in_progress); nothing ran again. Retry after Retry-After.'),
        422: error('This Idempotency-Key was used in the session for another tool or other arguments (idempotency_key_reused); nothing ran.'),
        429: error('The session, or its agent, runs as many calls as it may and its queue of waiting calls is full; nothing ran. Retry after the Retry-After header\'s seconds.'),
        503: error('The database cannot be reached (store_unavailable): the call did not run; retry after Retry-After (with an Idempotency-Key, safely).'),
      },
      async handler({ platform, params, body, signal, req }) {
        // Checked by the call log, with the MCP _meta field's: one rule for both.
        const idempotencyKey = req.headers['idempotency-key'];
        const session = await platform.sessions.get(params.id);
        const box = await platform.toolboxes.forSession(session);
        const tool = Object.prototype.hasOwnProperty.call(box.tools, body.tool) ? box.tools[body.tool] : undefined;
        const withheld = box.withheld.get(body.tool);
        if (!tool && withheld !== undefined) throw new HttpError(409, 'tool_withheld', withheld);
        if (!tool) throw new HttpError(404, 'unknown_tool', `the session has no tool named ${JSON.stringify(body.tool)}`);
        let logged: LoggedCall | undefined;
        try {
          await tool.call(body.arguments ?? {}, { via: 'api', signal, onRecord: (done) => { logged = done; }, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) });
        } catch (err) {
          // A source's refusal of the arguments and a cancellation are recorded calls: the record answers them.
          if (!logged || !(err instanceof CallError || err instanceof CallCancelledError)) throw err;
        }
        const { record, result, replayed, endHeld } = logged!;
        return {
          status: 200,
          body: { call: callView(record), result, ...(replayed ? { replayed: true } : {}), ...(endHeld ? { end_pending: true } : {}) },
          ...(replayed ? { headers: { 'idempotent-replayed': 'true' } } : {}),
        };
      },
    }),
    route({
      method: 'GET', path: '/v1/sessions/{id}/calls', operationId: 'listCalls', tag: 'calls', auth: 'api_key_or_session',
      summary: 'The session\'s call log, oldest first.', query: PAGE_QUERY,
      responses: { 200: { description: 'A page of calls.', schema: pageOf(CallView) }, 404: error('No such session.') },
      async handler({ platform, params, query }) {
        await platform.sessions.get(params.id);
        return { status: 200, body: mapPage(await platform.calls.list(params.id, pageRequest(query)), (call) => callView(call)) };
      },
    }),
    route({
      method: 'GET', path: '/v1/sessions/{id}/calls/{call_id}', operationId: 'getCall', tag: 'calls', auth: 'api_key_or_session',
      summary: 'One call record.',
      responses: { 200: { description: 'The call.', schema: CallView }, 404: error('No such call.') },
      async handler({ platform, params }) {
        await platform.sessions.get(params.id);
        return { status: 200, body: callView(await platform.calls.get(params.id, params.call_id)) };
      },
    }),
  ];
}
