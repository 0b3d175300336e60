/**
 * /v1/keys: API keys made, listed and revoked over the API. A key's secret is in the answer that makes it
 * and nowhere else; lists show its id, prefix, scope and times. Only an admin key gets here to change
 * anything (the router applies the scope rule to every route).
 */
import { route, type Route } from '../route.js';
import { CreatedKeyView, KeyInput, KeyView, pageOf } from '../api/index.js';
import { PAGE_QUERY, errorResponse as error } from '../schemas.js';
import { keyView, mapPage, pageRequest } from '../views.js';

export function keyRoutes(): Route[] {
  return [
    route({
      method: 'POST', path: '/v1/keys', operationId: 'createApiKey', tag: 'keys', auth: 'api_key',
      summary: 'Make an API key: admin (anything) or read (GET requests only). The answer holds the key, shown this once.',
      body: { kind: 'json', schema: KeyInput }, replayOmits: ['key'],
      responses: {
        201: { description: 'Made; `key` is the secret.', schema: CreatedKeyView },
      },
      async handler({ platform, body }) {
        const { record, key } = await platform.apiKeys.create(body.name, body.scope ?? 'admin');
        return { status: 201, body: { ...keyView(record), key } };
      },
    }),
    route({
      method: 'GET', path: '/v1/keys', operationId: 'listApiKeys', tag: 'keys', auth: 'api_key',
      summary: 'List API keys, revoked ones included (never their secrets).', query: PAGE_QUERY,
      responses: { 200: { description: 'A page of keys.', schema: pageOf(KeyView) } },
      async handler({ platform, query }) {
        return { status: 200, body: mapPage(await platform.apiKeys.list(pageRequest(query)), keyView) };
      },
    }),
    route({
      method: 'GET', path: '/v1/keys/current', operationId: 'getCurrentApiKey', tag: 'keys', auth: 'api_key',
      summary: 'The key this request was made with (`subako login` checks a key with it).',
      responses: { 200: { description: 'The key.', schema: KeyView } },
      async handler({ apiKey }) {
        return { status: 200, body: keyView(apiKey!) };
      },
    }),
    route({
      method: 'DELETE', path: '/v1/keys/{id}', operationId: 'revokeApiKey', tag: 'keys', auth: 'api_key',
      summary: 'Revoke an API key: it authenticates nothing from now on. The last admin key cannot be revoked.',
      responses: { 200: { description: 'Revoked.', schema: KeyView }, 404: error('No such key.'), 409: error('It is the last admin key.') },
      async handler({ platform, params }) {
        return { status: 200, body: keyView(await platform.apiKeys.revoke(params.id)) };
      },
    }),
  ];
}
