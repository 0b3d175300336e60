/**
 * What each template must do, from `subako init` to a call through the official MCP client (issue 14's
 * first "done when"): init → build → check → call (ok; a tool error naming the argument; an HTTP GET through
 * subako_http to a loopback HTTPS server with --allow; an image written to /volume/tmp answered as a
 * resource_link) → pack → push to a running `subako serve` → a session → tools/call. The HTTP and image tools
 * are written by each template's test into the project's source, with that template's SDK. Without the
 * template's toolchain the flow skips, saying what to install.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import sharp from 'sharp';
import { makeTestCa } from '../egress/helpers/test-ca.js';
import { startServer as startHttpsServer, type TestServer } from '../egress/helpers/servers.js';
import { spawnServe, tempDir, type ChildServer } from '../server/helpers/harness.js';
import { recipeFor } from '../../src/devkit/index.js';
import { toolchainMissing } from '../helpers/toolchains.js';
import { scratchDir, subako } from './helpers.js';

export interface TemplateCase {
  template: 'c' | 'assemblyscript' | 'rust';
  /** The init'd project's main source file, relative to it. */
  source: string;
  /**
   * The source with two tools added in the SDK's own API: `fetch` (`{"url"}`: GET it through subako_http,
   * answer `{"status", "body"}` as structured content) and `chart` (write `png` to /volume/tmp/chart.png,
   * answer a resource_link to it).
   */
  addTools(source: string, png: Buffer): string;
}

/** A small real PNG (the renderer decodes it: it must be one). */
async function testPng(): Promise<Buffer> {
  return sharp({ create: { width: 6, height: 4, channels: 3, background: { r: 200, g: 30, b: 30 } } }).png().toBuffer();
}

/** The numbers of a byte array, for a C, AssemblyScript or Rust array literal. */
export const byteList = (bytes: Buffer): string => [...bytes].join(', ');

interface CallJson {
  status: string;
  result: { content: { type: string; text?: string; uri?: string; mimeType?: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };
  model: { type: string; text?: string; mimeType?: string }[];
}

export function templateFlow(spec: TemplateCase): void {
  describe(`the ${spec.template} template, from subako init to a call through an MCP client`, { skip: toolchainMissing(recipeFor(spec.template)) }, () => {
    const name = `t-${spec.template === 'assemblyscript' ? 'as' : spec.template}`;
    let scratch: string;
    let project: string;
    let caFile: string;
    let png: Buffer;
    let https: TestServer;
    let platform: ChildServer;
    let platformData: string;
    let bundle: string;

    before(async () => {
      scratch = scratchDir(spec.template);
      project = join(scratch, 'project');
      caFile = join(scratch, 'ca.pem');
      writeFileSync(caFile, makeTestCa().ca);
      png = await testPng();
      https = await startHttpsServer((req, res) => {
        res.setHeader('content-type', 'text/plain');
        res.end(`hello from ${req.url}`);
      });
      platformData = tempDir();
      platform = await spawnServe(platformData);
    });
    after(async () => {
      await https?.close();
      platform?.child.kill('SIGTERM');
      await platform?.exited;
      rmSync(scratch, { recursive: true, force: true });
      rmSync(platformData, { recursive: true, force: true });
    });

    const call = async (tool: string, args: unknown, ...flags: string[]): Promise<CallJson> => {
      const run = await subako(['call', project, tool, JSON.stringify(args), '--json', ...flags], { env: { NODE_EXTRA_CA_CERTS: caFile } });
      let out: CallJson;
      try {
        out = JSON.parse(run.stdout) as CallJson;
      } catch {
        assert.fail(`subako call printed no JSON (exit ${run.code}): ${run.stderr}`);
      }
      // The exit-code table of cli/call-exit.ts, as the README documents it: 0 a result, 1 a tool error or crash.
      assert.equal(run.code, out.status === 'ok' ? 0 : 1, `subako call's exit for ${out.status}: ${run.stderr}`);
      return out;
    };

    test('init writes a project, and the test adds an HTTP tool and an image tool to its source', async () => {
      const run = await subako(['init', project, '--template', spec.template, '--name', name]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(`created package "${name}" \\(${spec.template}\\)`));
      assert.ok(existsSync(join(project, '.gitignore')), 'the template\'s _gitignore becomes .gitignore');
      assert.equal(JSON.parse(readFileSync(join(project, 'subako-package.json'), 'utf8')).name, name);
      const path = join(project, spec.source);
      const before = readFileSync(path, 'utf8');
      const after = spec.addTools(before, png);
      assert.notEqual(after, before, 'the tools were added');
      writeFileSync(path, after);
    });

    test('build compiles module.wasm, then checks it and lists the tools', async () => {
      const run = await subako(['build', project]);
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
      assert.match(run.stdout, /^accepted: /);
      for (const tool of ['greet', 'fetch', 'chart']) assert.match(run.stdout, new RegExp(`^ {2}${tool}\\b`, 'm'));
    });

    test('check accepts the built package', async () => {
      const run = await subako(['check', project]);
      assert.equal(run.code, 0, run.stdout);
      assert.match(run.stdout, /with 3 tools/);
    });

    test('call: the example tool answers structured content', async () => {
      const out = await call('greet', { name: 'Ada' });
      assert.equal(out.status, 'ok');
      assert.match(String(out.result.structuredContent?.message), /Ada/);
    });

    test('call: a missing argument is a tool_error that names it', async () => {
      const out = await call('greet', {});
      assert.equal(out.status, 'tool_error');
      assert.equal(out.result.isError, true);
      assert.match(out.model.map((b) => b.text ?? '').join('\n'), /"?name"?/);
    });

    test('call: an HTTP GET through subako_http reaches a loopback HTTPS server with --allow', async () => {
      const url = https.url('localhost', '/greeting?from=template');
      const arrived = https.arrivals.length;
      const out = await call('fetch', { url }, '--allow', `localhost:${https.port}`, '--allow-private-destinations');
      assert.equal(out.status, 'ok', JSON.stringify(out));
      assert.deepEqual(out.result.structuredContent, { status: 200, body: 'hello from /greeting?from=template' });
      assert.equal(https.arrivals.length, arrived + 1);
      assert.equal(https.arrivals.at(-1)!.method, 'GET');
    });

    test('call: without --allow the same GET is refused by the host, and nothing arrives', async () => {
      const arrived = https.arrivals.length;
      const out = await call('fetch', { url: https.url('localhost', '/refused') });
      assert.equal(out.status, 'tool_error');
      assert.match(out.model[0].text ?? '', /host_not_allowed/);
      assert.equal(https.arrivals.length, arrived);
    });

    test('call: an image written to /volume/tmp comes back as a resource_link, which the model sees as the image', async () => {
      const volume = join(scratch, 'volume');
      const out = await call('chart', {}, '--volume', volume);
      assert.equal(out.status, 'ok', JSON.stringify(out));
      const link = out.result.content.find((b) => b.type === 'resource_link');
      assert.equal(link?.uri, 'volume:///tmp/chart.png');
      assert.ok(out.model.some((b) => b.type === 'image' && b.mimeType === 'image/png'), JSON.stringify(out.model));
      assert.deepEqual(readFileSync(join(volume, 'tmp', 'chart.png')), png);
    });

    test('pack writes <name>-<version>.tar.gz and prints its path', async () => {
      const run = await subako(['pack', project], { cwd: scratch });
      assert.equal(run.code, 0, run.stderr);
      bundle = run.stdout.trim();
      assert.equal(bundle, join(scratch, `${name}-0.1.0.tar.gz`));
    });

    test('push to a running subako serve, a session, and tools/call through the official MCP client', async () => {
      const run = await subako(['push', bundle, '--server', platform.url, '--api-key', platform.apiKey]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(`^package ${name}@0\\.1\\.0 published\\n`));
      const agent = await platform.call('POST', '/v1/agents', { name: `${name} agent`, tools: [{ package: name }] });
      assert.equal(agent.status, 201, JSON.stringify(agent.body));
      const session = await platform.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
      assert.equal(session.status, 201, JSON.stringify(session.body));
      const client = new Client({ name: 'devkit-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new StreamableHTTPClientTransport(new URL(session.body.mcp.capability_url)));
      try {
        const listed = await client.listTools();
        assert.deepEqual(listed.tools.map((t) => t.name).sort(), ['chart', 'fetch', 'greet']);
        const result = await client.callTool({ name: 'greet', arguments: { name: 'Grace' } });
        assert.notEqual(result.isError, true, JSON.stringify(result));
        assert.match(String((result.structuredContent as { message?: string })?.message), /Grace/);
      } finally {
        await client.close();
      }
    });
  });
}
