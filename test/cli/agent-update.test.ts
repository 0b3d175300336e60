/** `subako push --agent`: the agent's next spec, with the pushed package at its new version (cli/agent-update.ts). */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { agentInputWithPackage } from '../../src/cli/agent-update.js';
import type { AgentSpec } from '../../src/platform/index.js';

describe('push --agent: the agent\'s next spec', () => {
  const spec: AgentSpec = {
    name: 'demo',
    description: 'A demo.',
    tools: [
      { package: 'greet', requested: 'latest', version: '1.0.0', egress: { allow: ['api.example.com'], grants: [] }, data: true },
      { package: 'other', requested: '2.0.0', version: '2.0.0', egress: { allow: [], grants: [] }, data: false },
    ],
    skills: [{ name: 'howto', requested: 'latest', version: '1' }],
    mcp_servers: [{ name: 'gh', url: 'https://mcp.example.com', credential: { vault_id: 'vlt_1' }, default_policy: 'allow', tools: [{ name: 'rm', policy: 'deny' }], definitions: 'follow' }],
    discovery: { mode: 'search', entry: ['gh__read'] },
  };

  test('the pushed package is pinned at its new version; its grants, and everything else, stay as requested', () => {
    const change = agentInputWithPackage(spec, { name: 'greet', version: '1.1.0' });
    assert.equal(change.added, false);
    assert.equal(change.previous, '1.0.0');
    assert.deepEqual(change.input, {
      name: 'demo',
      description: 'A demo.',
      tools: [
        { package: 'greet', version: '1.1.0', egress: { allow: ['api.example.com'], grants: [] }, data: true },
        { package: 'other', version: '2.0.0', egress: { allow: [], grants: [] }, data: false },
      ],
      skills: [{ name: 'howto', version: 'latest' }],
      mcp_servers: [{ name: 'gh', url: 'https://mcp.example.com', credential: { vault_id: 'vlt_1' }, default_policy: 'allow', tools: [{ name: 'rm', policy: 'deny' }], definitions: 'follow' }],
      discovery: { mode: 'search', entry: ['gh__read'] },
    });
  });

  test('a package the agent did not grant is added, without network', () => {
    const change = agentInputWithPackage(spec, { name: 'fresh', version: '0.1.0' });
    assert.equal(change.added, true);
    assert.equal(change.previous, null);
    assert.deepEqual(change.input.tools!.at(-1), { package: 'fresh', version: '0.1.0' });
  });
});
