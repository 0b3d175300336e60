/**
 * End users' connections: the consent link a person opens (it redirects to the authorization server), the
 * authorization server's redirect back (the server's public callback), the client metadata document subako offers
 * as a web client, and the operator's view of a user's connections (listed without tokens, ended with revocation).
 *
 * The two browser-facing routes answer a small HTML page, never JSON and never a code or a token: a person reads it.
 */
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { rawRoute, route, type Route } from '../route.js';
import { ConnectionView, DisconnectedView } from '../api/index.js';
import { errorResponse as error } from '../schemas.js';
import { SubakoError } from '../../errors.js';

/** platform/connections.ts's CALLBACK_PATH and CLIENT_METADATA_PATH (server/ takes nothing but types from platform/). */
const CALLBACK_PATH = '/v1/connections/callback';
const CLIENT_METADATA_PATH = '/v1/connections/client-metadata.json';

const CALLBACK_QUERY = {
  code: { type: 'string', maxLength: 4096, description: 'The authorization code (RFC 6749 §4.1.2).' },
  state: { type: 'string', maxLength: 8192, description: 'The sealed state subako sent.' },
  iss: { type: 'string', maxLength: 2048, description: 'The authorization server\'s issuer (RFC 9207).' },
  error: { type: 'string', maxLength: 256, description: 'The authorization server\'s refusal (RFC 6749 §4.1.2.1).' },
  error_description: { type: 'string', maxLength: 2048, description: 'Not shown: it comes from another server.' },
} as const;

export function connectionRoutes(): Route[] {
  return [
    rawRoute({
      method: 'GET', path: '/v1/connect/{link}', operationId: 'openConsentLink', tag: 'users', auth: 'none', raw: true,
      summary: 'A consent link, as a tool call that needs a user\'s connection hands it out: it sends the person to the authorization server ' +
        '(authorization code with PKCE, the resource indicator, a sealed state bound to the user, session and connection). Good for 30 minutes.',
      responses: { 302: { description: 'To the authorization server.' }, 400: { description: 'A page saying why the link cannot be used.', contentType: 'text/html' } },
      async handler({ platform, params, res }) {
        try {
          const location = await platform.connections.startConsent(params.link);
          res.writeHead(302, { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
          res.end();
        } catch (err) {
          if (!(err instanceof SubakoError)) platform.log.child({ component: 'connections' }).error({ err }, 'a consent step failed unexpectedly');
          page(res, refusalStatus(err), 'Not connected', messageOf(err));
        }
        return null;
      },
    }),
    rawRoute({
      method: 'GET', path: CALLBACK_PATH, operationId: 'finishConnection', tag: 'users', auth: 'none', raw: true, query: CALLBACK_QUERY,
      summary: 'Where the authorization server sends the person back: the state is opened and spent once, the issuer checked (RFC 9207), the ' +
        'code exchanged, and the tokens stored sealed in the user\'s connections vault.',
      responses: { 200: { description: 'A page saying the connection is made.', contentType: 'text/html' }, 400: { description: 'A page saying why not.', contentType: 'text/html' } },
      async handler({ platform, query, res }) {
        try {
          const done = await platform.connections.finishConsent(query);
          page(res, 200, 'Connected', `Your ${done.connection} account is connected. You can close this window and go back to your app; it carries on from there.`);
        } catch (err) {
          if (!(err instanceof SubakoError)) platform.log.child({ component: 'connections' }).error({ err }, 'a consent step failed unexpectedly');
          page(res, refusalStatus(err), 'Not connected', messageOf(err));
        }
        return null;
      },
    }),
    route({
      method: 'GET', path: CLIENT_METADATA_PATH, operationId: 'getConnectionClientMetadata', tag: 'users', auth: 'none',
      summary: 'subako\'s OAuth Client ID Metadata Document as a web client (used as its client_id where an authorization server supports them and the public URL is https).',
      responses: { 200: { description: 'The document.', schema: z.record(z.string(), z.unknown()) } },
      async handler({ platform }) {
        return { status: 200, body: platform.connections.clientMetadataDocument() };
      },
    }),
    route({
      method: 'GET', path: '/v1/users/{id}/connections', operationId: 'listUserConnections', tag: 'users', auth: 'api_key',
      summary: 'The connections the user made themselves (connected or expired, scopes, expiry); never a token.',
      responses: { 200: { description: 'The connections.', schema: z.object({ items: z.array(ConnectionView) }) }, 404: error('No such user.') },
      async handler({ platform, params }) {
        return { status: 200, body: { items: await platform.connections.list(params.id) } };
      },
    }),
    route({
      method: 'DELETE', path: '/v1/users/{id}/connections/{connection}', operationId: 'deleteUserConnection', tag: 'users', auth: 'api_key',
      summary: 'End a user\'s connection (by its id or name): its tokens are revoked at the authorization server where it offers revocation (RFC 7009) ' +
        'and deleted; the next call that needs it asks the user to connect again.',
      responses: { 200: { description: 'Ended.', schema: DisconnectedView }, 404: error('No such user or connection.') },
      async handler({ platform, params }) {
        return { status: 200, body: await platform.connections.disconnect(params.id, params.connection) };
      },
    }),
  ];
}

function refusalStatus(err: unknown): number {
  // platform/'s ConnectionConsentError: a link or callback that cannot be used (its codes are all `connection.*`).
  if (err instanceof SubakoError && err.code.startsWith('connection.') && err.code !== 'connection.discovery') return 400;
  if (err instanceof SubakoError) return err.code === 'not_found' ? 404 : 502;
  return 500;
}

/** What the person is told: a refusal's own message (they never hold a secret), or that the server failed. */
function messageOf(err: unknown): string {
  return err instanceof SubakoError ? err.message : 'The server failed to finish the connection; try the link from your app again.';
}

function page(res: ServerResponse, status: number, title: string, message: string): void {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head>` +
    `<body><main><h1>${escape(title)}</h1><p id="message">${escape(message)}</p></main></body></html>`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer',
    'content-security-policy': "default-src 'none'", 'x-content-type-options': 'nosniff',
  });
  res.end(body);
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
