/**
 * The call pipeline by composition (house issue, point 1): a session's tool is composed once — the call log,
 * approval, admission around the tool — and nothing per session is recomputed per call. One MCP `tools/call` to
 * a function package, from the HTTP request to the guest and back, enters the call log's file once; over 100
 * calls of one session the agent's skill is looked up once (when the toolbox is built) and its egress policy is
 * compiled once (every call's context carries the one compiled policy).
 *
 * A real platform and server in this process (SQLite, the sandbox process), a real MCP client; what is counted
 * is read off the real store (a proxy counting `getSkill`) and the real runtime (a wrapper keeping each call's
 * context and the stack it was asked from).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Platform, FunctionRuntime, bootstrapIfFresh, type PackageRuntime } from '../../src/platform/index.js';
import { SqliteStore } from '../../src/platform/store/index.js';
import { SubakoServer } from '../../src/server/index.js';
import { packBundle } from '../../src/package/index.js';
import type { FunctionCallContext } from '../../src/function/index.js';
import { makeApi, probePackageDir, tempDir, type Api } from '../server/helpers/harness.js';
import { EMPTY_CATALOG } from '../../src/mcp/index.js';

const CALLS = 100;

describe('a session\'s tool is composed once; a call recomputes nothing of its session', () => {
  const dataDir = tempDir();
  const store = new SqliteStore(join(dataDir, 'subako.db'));
  let skillLookups = 0;
  // The real store, with its skill look-ups counted.
  const countingStore = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === 'getSkill') return (...args: Parameters<SqliteStore['getSkill']>) => { skillLookups += 1; return target.getSkill(...args); };
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const local = new FunctionRuntime({ poolSize: 2 });
  /** Each call's context, and the stack it was asked for it from. */
  const contexts: FunctionCallContext[] = [];
  const stacks: string[] = [];
  const runtime: PackageRuntime = {
    inspect: (dir) => local.inspect(dir),
    discover: (pkg) => local.discover(pkg),
    close: () => local.close(),
    release: (digest) => local.release(digest),
    toolbox: (pkg, tools, context) => local.toolbox(pkg, tools, async () => {
      const made = await context();
      contexts.push(made);
      stacks.push(new Error('asked for a context').stack ?? '');
      return made;
    }),
  };
  let platform: Platform;
  let server: SubakoServer;
  let api: Api;
  let stackLimit: number;

  before(async () => {
    stackLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 200;
    platform = await Platform.open({
      dataDir, runtime, remote: { tools: async () => ({}), catalog: async () => EMPTY_CATALOG }, sealingKey: Buffer.alloc(32, 3), store: countingStore as SqliteStore,
    });
    server = await SubakoServer.start({ platform, port: 0 });
    api = makeApi(server.url, (await bootstrapIfFresh(platform, null))!.apiKey);
  });
  after(async () => {
    Error.stackTraceLimit = stackLimit;
    await server?.close(5_000);
    store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`${CALLS} MCP calls: one skill look-up, one compiled egress policy, and each call entered the call log once`, async () => {
    assert.equal((await api.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
    const skill = tempDir('subako-skill-');
    mkdirSync(join(skill, 'refs'));
    writeFileSync(join(skill, 'SKILL.md'), '---\nname: howto\ndescription: How to.\n---\nDo it well.\n');
    assert.equal((await api.call('POST', '/v1/skills', await packBundle(skill))).status, 201);
    const agent = await api.call('POST', '/v1/agents', {
      name: 'composed', skills: [{ name: 'howto' }],
      tools: [{ package: 'probe', egress: { allow: ['api.example.com', '*.example.org:8443'], grants: ['https://api.example.com'] } }],
    });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = await api.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
    // From here: the session's toolbox is built (as the client connects and lists), then the calls.
    skillLookups = 0;
    const client = new Client({ name: 'pipeline', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.body.mcp.capability_url)));
    try {
      for (let n = 0; n < CALLS; n++) {
        const result = await client.callTool({ name: 'echo', arguments: { n } });
        assert.deepEqual(JSON.parse((result.content as { text: string }[])[0].text), { n });
      }
    } finally {
      await client.close();
    }
    assert.equal(contexts.length, CALLS);
    assert.equal(skillLookups, 1, 'the agent\'s skill was looked up once, when the session\'s toolbox was built');
    assert.equal(new Set(contexts.map((c) => c.egress?.compiled)).size, 1, 'every call carried the one compiled policy');
    assert.ok(contexts[0].egress?.compiled?.grants.has('https://api.example.com'));
    assert.equal(new Set(contexts.map((c) => c.skillsDir)).size, 1);
    // The stack a call asked for its context from: the call log's file appears in it once, its step.
    for (const stack of [stacks[0], stacks[CALLS - 1]]) {
      const frames = stack.split('\n').filter((line) => line.includes('/platform/calls/call-log.js'));
      assert.equal(frames.length, 1, `the call entered call-log.js once:\n${stack}`);
    }
    const logged = await api.call('GET', `/v1/sessions/${session.body.id}/calls?limit=200`);
    assert.equal(logged.body.items.length, CALLS, 'each call was recorded once');
  });
});
