/**
 * What the connection tests share: an agent whose remote server each end user reaches with their own OAuth
 * connection, sessions for users, and the official v2 client with or without URL-mode elicitation.
 */
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Api } from './harness.js';

export interface UserSession { id: string; url: string }

/** An agent with one remote server `up` and the connection `up` for it (scopes as given). */
export async function connectedAgent(api: Api, upstreamUrl: string, definitions: 'pin' | 'follow' = 'follow'): Promise<string> {
  const agent = await api.call('POST', '/v1/agents', {
    name: `connected-${Date.now()}`, mcp_servers: [{ name: 'up', url: upstreamUrl, definitions }],
    connections: [{ name: 'up', mcp_server: 'up', scopes: ['tools:call'] }],
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  return agent.body.id as string;
}

export async function userSession(api: Api, agentId: string, userId: string): Promise<UserSession> {
  const user = await api.call('POST', '/v1/users', { id: userId });
  assert.ok(user.status === 201 || user.status === 409, JSON.stringify(user.body));
  const session = await api.call('POST', `/v1/agents/${agentId}/sessions`, { user_id: userId });
  assert.equal(session.status, 201, JSON.stringify(session.body));
  return { id: session.body.id, url: session.body.mcp.capability_url };
}

export type UrlElicit = (params: { mode?: string; message: string; url?: string }) => Promise<{ action: 'accept' | 'decline' | 'cancel' }>;

/** The official v2 client; with `onUrl` it declares URL-mode elicitation and answers through it (auto-fulfilling MRTR). */
export async function mcpClient(url: string, onUrl?: UrlElicit, options: { manual?: boolean } = {}): Promise<Client> {
  const client = new Client({ name: 'connections-test', version: '1.0.0' }, {
    versionNegotiation: { mode: 'auto' }, ...(onUrl || options.manual ? { capabilities: { elicitation: { url: {} } } } : {}),
    ...(options.manual ? { inputRequired: { autoFulfill: false } } : {}),
  });
  if (onUrl) client.setRequestHandler('elicitation/create', async (request) => onUrl(request.params as never) as never);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

export const textOf = (result: unknown): string => ((result as { content?: { text?: string }[] }).content ?? []).map((b) => b.text ?? '').join('');

/** The consent link a result's text carries. */
export function linkIn(text: string): string {
  const match = /(https?:\/\/\S+\/v1\/connect\/[A-Za-z0-9_-]+)/.exec(text);
  assert.ok(match, `no consent link in: ${text}`);
  return match[1];
}

/** Follows a consent link as a browser would, through an authorization server that approves at once; answers the callback's page. */
export async function consentWithoutPerson(link: string): Promise<{ status: number; page: string; callback: string }> {
  const toAs = await fetch(link, { redirect: 'manual' });
  assert.equal(toAs.status, 302, await toAs.text());
  const back = await fetch(toAs.headers.get('location')!, { redirect: 'manual' });
  assert.equal(back.status, 302, await back.text());
  const callback = back.headers.get('location')!;
  const done = await fetch(callback);
  return { status: done.status, page: await done.text(), callback };
}
