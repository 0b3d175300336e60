/**
 * /v1/keys: API keys made, listed and revoked over the API. A key's secret is in the answer that makes it
 * and nowhere else; lists show its id, prefix, scope and times. Only an admin key gets here to change
 * anything (the router applies the scope rule to every route).
 */
import type { ApiKeyRecord, ApiKeyScope } from '../../platform/index.js';
import type { JsonSchema } from '../../tool.js';
import type { Route } from '../route.js';
import { ERROR_SCHEMA, PAGE_QUERY, pageOf } from '../schemas.js';
import { mapPage, pageRequest } from '../views.js';

const SCOPES = ['admin', 'read'] as const satisfies readonly ApiKeyScope[];
const error = (description: string) => ({ description, schema: ERROR_SCHEMA });
const text = { type: 'string' } as const;
const time = { type: ['string', 'null'] } as const;

const KEY_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'prefix', 'scope', 'created_at', 'last_used_at', 'revoked_at'],
  properties: {
    id: text, name: text, prefix: { type: 'string', description: 'The first characters of the key, to tell keys apart.' },
    scope: { type: 'string', enum: [...SCOPES] }, created_at: text, last_used_at: time, revoked_at: time,
  },
};

const KEY_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200, description: 'What the key is for (e.g. "prometheus").' },
    scope: { type: 'string', enum: [...SCOPES], description: 'admin (anything) or read (GET requests only); default admin.' },
  },
};

export function keyView(rec: ApiKeyRecord): Record<string, unknown> {
  return {
    id: rec.id, name: rec.name, prefix: rec.prefix, scope: rec.scope, created_at: rec.createdAt,
    last_used_at: rec.lastUsedAt, revoked_at: rec.revokedAt,
  };
}

export function keyRoutes(): Route[] {
  return [
    {
      method: 'POST', path: '/v1/keys', operationId: 'createApiKey', tag: 'keys', auth: 'api_key',
      summary: 'Make an API key: admin (anything) or read (GET requests only). The answer holds the key, shown this once.',
      body: { kind: 'json', schema: KEY_INPUT_SCHEMA }, replayOmits: ['key'],
      responses: {
        201: { description: 'Made; `key` is the secret.', schema: { ...KEY_SCHEMA, required: [...(KEY_SCHEMA.required as string[]), 'key'], properties: { ...(KEY_SCHEMA.properties as object), key: text } } },
      },
      async handler({ platform, body }) {
        const input = body as { name: string; scope?: ApiKeyScope };
        const { record, key } = await platform.apiKeys.create(input.name, input.scope ?? 'admin');
        return { status: 201, body: { ...keyView(record), key } };
      },
    },
    {
      method: 'GET', path: '/v1/keys', operationId: 'listApiKeys', tag: 'keys', auth: 'api_key',
      summary: 'List API keys, revoked ones included (never their secrets).', query: PAGE_QUERY,
      responses: { 200: { description: 'A page of keys.', schema: pageOf(KEY_SCHEMA) } },
      async handler({ platform, query }) {
        return { status: 200, body: mapPage(await platform.apiKeys.list(pageRequest(query)), keyView) };
      },
    },
    {
      method: 'GET', path: '/v1/keys/current', operationId: 'getCurrentApiKey', tag: 'keys', auth: 'api_key',
      summary: 'The key this request was made with (`subako login` checks a key with it).',
      responses: { 200: { description: 'The key.', schema: KEY_SCHEMA } },
      async handler({ apiKey }) {
        return { status: 200, body: keyView(apiKey!) };
      },
    },
    {
      method: 'DELETE', path: '/v1/keys/{id}', operationId: 'revokeApiKey', tag: 'keys', auth: 'api_key',
      summary: 'Revoke an API key: it authenticates nothing from now on. The last admin key cannot be revoked.',
      responses: { 200: { description: 'Revoked.', schema: KEY_SCHEMA }, 404: error('No such key.'), 409: error('It is the last admin key.') },
      async handler({ platform, params }) {
        return { status: 200, body: keyView(await platform.apiKeys.revoke(params.id)) };
      },
    },
  ];
}
