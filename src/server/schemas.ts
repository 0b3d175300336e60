/**
 * JSON Schemas of the API's bodies and answers, shared by the router (validation) and the OpenAPI document.
 * Inputs are strict (`additionalProperties: false`) so a misspelt field is an error, not silently ignored.
 */
import type { JsonSchema } from '../tool.js';
import type { ToolPolicy } from '../platform/index.js';

const str = (extra: JsonSchema = {}): JsonSchema => ({ type: 'string', ...extra });
const name64 = str({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' });
const version = str({ pattern: '^(latest|[A-Za-z0-9][A-Za-z0-9._+-]{0,63})$' });
const stringList = (max: number): JsonSchema => ({ type: 'array', maxItems: max, items: str({ minLength: 1, maxLength: 512 }) });
/**
 * The platform's TOOL_POLICIES, spelt again because server/ imports platform/ for types only: `satisfies` refuses a
 * name that is not a policy, and ALL_POLICIES_LISTED stops compiling when a policy is missing here.
 */
const POLICIES = ['allow', 'require_approval', 'require_user_approval', 'deny'] as const satisfies readonly ToolPolicy[];
export const ALL_POLICIES_LISTED: [Exclude<ToolPolicy, (typeof POLICIES)[number]>] extends [never] ? true : false = true;
const policy: JsonSchema = {
  type: 'string', enum: [...POLICIES],
  description: 'allow: served; require_approval: served, each call held until an operator (an API key: the API or the console) approves it; ' +
    'require_user_approval: served, each call approved by the end user through the MCP client\'s elicitation, which shows the whole call ' +
    '(held for an operator instead when the client cannot ask, or the call cannot be shown whole in one message); deny: not served.',
};

export const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: str(),
        message: str(),
        problems: { type: 'array', items: { type: 'object', properties: { code: str(), message: str() } } },
        limit: { type: 'string', enum: ['session', 'agent'], description: 'On 429: the limit that refused the call.' },
        retry_after_ms: { type: 'integer', description: 'On 429: when to try again, as Retry-After says in seconds.' },
      },
    },
  },
};

export const PAGE_QUERY: Record<string, JsonSchema> = {
  limit: {
    type: 'integer', minimum: 1, maximum: 200,
    description: 'Items per page (1-200, default 50). A page also ends before its items pass 1 MiB of JSON (it holds at least one); follow next_cursor for the rest.',
  },
  after: str({ minLength: 1, maxLength: 512, description: 'The next_cursor of the previous page.' }),
};

export const pageOf = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['items', 'next_cursor'],
  properties: { items: { type: 'array', items: item }, next_cursor: { type: ['string', 'null'] } },
});

export const TOOL_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['name', 'inputSchema'],
  properties: {
    name: str(), description: str(), inputSchema: { type: 'object' }, outputSchema: { type: 'object' },
    requires_approval: { type: 'boolean', description: 'Each call waits for a person\'s approval (policy require_approval or require_user_approval).' },
  },
};

export const PACKAGE_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['name', 'version', 'digest', 'tools'],
  properties: {
    name: str(), version: str(), description: str(), digest: str(), created_at: str(),
    manifest: { type: 'object' }, tools: { type: 'array', items: TOOL_SCHEMA },
  },
};

export const PACKAGE_SUMMARY_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['name', 'latest_version', 'versions', 'tools'],
  properties: {
    name: str(), description: str(), latest_version: str(),
    versions: {
      type: 'array',
      items: {
        type: 'object', required: ['version', 'digest'],
        properties: { version: str(), description: str(), digest: str(), created_at: str() },
      },
    },
    tools: { type: 'array', items: TOOL_SCHEMA },
  },
};

export const SKILL_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['name', 'version', 'digest'],
  properties: { name: str(), version: str(), description: str(), digest: str(), created_at: str() },
};

export const AGENT_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: str({ minLength: 1, maxLength: 128 }),
    description: str({ maxLength: 4096 }),
    tools: {
      type: 'array',
      maxItems: 64,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['package'],
        properties: {
          package: name64,
          version,
          egress: {
            type: 'object',
            additionalProperties: false,
            properties: { allow: stringList(256), grants: stringList(64) },
          },
          data: { type: 'boolean' },
        },
      },
    },
    skills: {
      type: 'array',
      maxItems: 64,
      items: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: name64, version } },
    },
    mcp_servers: {
      type: 'array',
      maxItems: 32,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'url'],
        properties: {
          name: name64,
          url: str({ minLength: 1, maxLength: 2048 }),
          credential: {
            oneOf: [
              { type: 'null' },
              {
                type: 'object',
                additionalProperties: false,
                required: ['vault_id'],
                properties: { vault_id: str({ minLength: 1, maxLength: 64 }), credential_id: str({ minLength: 1, maxLength: 64 }) },
              },
            ],
          },
          default_policy: policy,
          tools: {
            type: 'array',
            maxItems: 256,
            items: {
              type: 'object', additionalProperties: false, required: ['name', 'policy'],
              properties: { name: str({ minLength: 1, maxLength: 128 }), policy },
            },
          },
        },
      },
    },
  },
};

export const AGENT_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'version'],
  properties: {
    id: str(), name: str(), version: { type: 'integer' }, created_at: str(), updated_at: str(),
    spec: { type: 'object' },
  },
};

export const AGENT_VERSION_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['agent_id', 'version', 'spec'],
  properties: { agent_id: str(), version: { type: 'integer' }, spec: { type: 'object' }, created_at: str() },
};

export const VAULT_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: str({ minLength: 1, maxLength: 128 }) },
};

export const VAULT_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['id', 'name'],
  properties: { id: str(), name: str(), created_at: str() },
};

const headerValue = str({ minLength: 1, maxLength: 8192 });

export const CREDENTIAL_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['target', 'payload'],
  properties: {
    target: str({ minLength: 1, maxLength: 2048 }),
    display_name: str({ maxLength: 256 }),
    payload: {
      oneOf: [
        {
          type: 'object', additionalProperties: false, required: ['auth_scheme', 'token'],
          properties: { auth_scheme: { const: 'static_bearer' }, token: headerValue },
        },
        {
          type: 'object', additionalProperties: false, required: ['auth_scheme', 'headers'],
          properties: {
            auth_scheme: { const: 'static_headers' },
            headers: { type: 'object', minProperties: 1, maxProperties: 32, additionalProperties: headerValue },
          },
        },
        {
          type: 'object', additionalProperties: false, required: ['auth_scheme', 'access_token'],
          properties: {
            auth_scheme: { const: 'oauth' },
            access_token: headerValue,
            expires_at: str({ maxLength: 64 }),
            refresh: {
              type: 'object', additionalProperties: false, required: ['token_endpoint', 'client_id', 'refresh_token'],
              properties: {
                token_endpoint: str({ minLength: 1, maxLength: 2048 }),
                client_id: str({ minLength: 1, maxLength: 512 }),
                client_secret: str({ maxLength: 2048 }),
                scope: str({ maxLength: 2048 }),
                refresh_token: str({ minLength: 1, maxLength: 8192 }),
                token_endpoint_auth: { type: 'string', enum: ['none', 'client_secret_basic', 'client_secret_post'] },
              },
            },
          },
        },
      ],
    },
  },
};

export const CREDENTIAL_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['id', 'vault_id', 'target', 'auth_scheme'],
  properties: {
    id: str(), vault_id: str(), target: str(), display_name: str(), auth_scheme: str(),
    expires_at: { type: ['string', 'null'] }, refreshable: { type: 'boolean' }, created_at: str(), updated_at: str(),
  },
};

export const SESSION_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    vault_ids: { type: 'array', maxItems: 16, items: str({ minLength: 1, maxLength: 64 }) },
    ttl_seconds: { type: 'integer', minimum: 1, maximum: 30 * 24 * 3600 },
  },
};

export const SESSION_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['id', 'agent_id', 'agent_version'],
  properties: {
    id: str(), agent_id: str(), agent_version: { type: 'integer' }, vault_ids: { type: 'array', items: str() },
    created_at: str(), expires_at: str(),
    token: str({ description: 'Shown once, at creation: opens the MCP endpoint and the session\'s call routes.' }),
    mcp: {
      type: 'object',
      properties: { capability_url: str(), url: str(), authorization: str() },
    },
  },
};

export const CALL_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['tool'],
  properties: { tool: str({ minLength: 1, maxLength: 256 }), arguments: { type: 'object' } },
};

export const CALL_APPROVAL_SCHEMA: JsonSchema = {
  type: 'object', description: 'Calls of a require_approval or require_user_approval tool: how the call was asked about and decided.',
  required: ['id', 'asked', 'decision'],
  properties: {
    id: str(), asked: { type: 'string', enum: ['elicitation', 'api'] },
    decision: { type: 'string', enum: ['pending', 'approved', 'denied', 'expired', 'invalid', 'stopped'] },
    decided_by: { type: ['string', 'null'], description: 'The id of the API key that decided (asked: api).' },
    decided_at: { type: ['string', 'null'] }, reason: str(),
  },
};

export const CALL_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['id', 'session_id', 'tool', 'outcome'],
  properties: {
    id: str(), session_id: str(), via: { type: 'string', enum: ['api', 'mcp', 'library'] }, tool: str(), arguments: {},
    outcome: {
      type: 'string', enum: ['running', 'ok', 'tool_error', 'crash', 'cancelled', 'invalid_arguments', 'denied', 'unknown'],
      description: 'unknown: the call was cut off mid-way (the server running it stopped or lost its lease before its end was recorded, or its ' +
        'worker stopped answering) and whether the tool ran to its end is not known; crash.reason is interrupted and crash.message says what to do.',
    },
    crash: { type: ['object', 'null'] }, model: { type: 'array' }, stderr_tail: str(), egress: { type: 'array' },
    duration_ms: { type: ['integer', 'null'] }, started_at: str(),
    approval: CALL_APPROVAL_SCHEMA,
    lease_lapsed: {
      type: 'object', required: ['marked_as', 'note'],
      description: 'Present when the call\'s end was written after the lease of the server running it had lapsed (the database out of its reach for ' +
        'longer than the lease): the record holds the outcome the call really had, and marked_as what another server marked it meanwhile (or null).',
      properties: {
        marked_as: { type: ['object', 'null'], properties: { outcome: str(), crash: { type: ['object', 'null'] } } },
        note: str(),
      },
    },
  },
};

const approvalProperties: Record<string, JsonSchema> = {
  id: str(), session_id: str(), call_id: str({ description: 'The call record that waits for the decision.' }), tool: str(),
  arguments: {
    description: 'Exactly the arguments the tool receives once the call is approved, but for values of the session\'s vault secrets, ' +
      'found by value and shown as "[redacted]" at the places hidden_secrets names (never hidden for the name of a key).',
  },
  hidden_secrets: {
    type: 'array', items: str(),
    description: 'JSON Pointers to each string (or member, when its key held one) in which a vault secret is shown as "[redacted]": the tool ' +
      'receives the secret there. A "[redacted]" not named here is the agent\'s own text.',
  },
  created_at: str(),
  expires_at: str({ description: 'Undecided by then, the call ends denied.' }),
};

export const APPROVAL_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['id', 'session_id', 'call_id', 'tool', 'arguments', 'hidden_secrets', 'expires_at'],
  properties: approvalProperties,
};

export const HELD_APPROVAL_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['id', 'session_id', 'call_id', 'tool', 'arguments', 'hidden_secrets', 'expires_at', 'decision'],
  properties: {
    ...approvalProperties,
    decision: { type: 'string', enum: ['pending', 'approved', 'denied', 'expired', 'stopped'], description: 'pending until it is decided or ends.' },
    decided_by: { type: ['string', 'null'], description: 'The id of the API key that decided.' },
    decided_at: { type: ['string', 'null'] },
    reason: { type: ['string', 'null'] },
  },
};

export const APPROVAL_PAGE_QUERY: Record<string, JsonSchema> = {
  limit: { type: 'integer', minimum: 1, maximum: 32, description: 'Items per page (1-32, default 16): each carries its call\'s whole arguments.' },
  after: str({ minLength: 1, maxLength: 512, description: 'The next_cursor of the previous page.' }),
};

export const APPROVAL_DECISION_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['decision'],
  properties: { decision: { type: 'string', enum: ['approve', 'deny'] } },
};

export const CALL_ANSWER_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['call', 'result'],
  properties: {
    call: CALL_SCHEMA, result: { type: 'object' },
    replayed: {
      type: 'boolean', description: 'true when this answers a retry with the same Idempotency-Key: the first call\'s record and result; nothing ran again.',
    },
    end_pending: {
      type: 'boolean',
      description: 'true when the database could not take the call\'s end: the server holds it and writes it once the database is back (the call log ' +
        'shows the call running until then). The result is the call\'s own.',
    },
  },
};
