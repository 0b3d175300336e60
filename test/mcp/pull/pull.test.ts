/**
 * `subako mcp pull` end to end: a real MCP server (official v2 SDK) on loopback behind a bearer header,
 * the CLI writes the bindings (twice: same bytes), `tsc` compiles them in a strict project that imports
 * `subako` as a package, and the compiled wrappers call the server.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { McpServerError } from '../../../src/mcp/errors.js';
import { mcp } from '../../../src/mcp/index.js';
import { generateBindings, type ToolListing } from '../../../src/mcp/pull/generate.js';
import { makeProject, run, TSC } from './ts-project.js';

const RUNNER = join(dirname(fileURLToPath(import.meta.url)), '..', 'oauth', 'cli-runner.js');
const SECRET = 'pull-secret-9f3a7c1e5b';

/** The server: tools whose names collide once sanitized, an output schema, nested and nullable types. */
function makeServer(): McpServer {
  const server = new McpServer({ name: 'pull-target', version: '1.0.0' });
  server.registerTool(
    'add',
    {
      description: 'Adds two numbers. */ not the end of a comment',
      inputSchema: z.object({ x: z.number(), y: z.number().optional() }),
      outputSchema: z.object({ sum: z.number() }),
    },
    async ({ x, y }) => ({ content: [{ type: 'text', text: String(x + (y ?? 0)) }], structuredContent: { sum: x + (y ?? 0) } }),
  );
  server.registerTool(
    'get-user',
    {
      description: 'Looks a user up.',
      inputSchema: z.object({ id: z.string(), fields: z.array(z.enum(['name', 'email'])).optional(), tag: z.string().nullable() }),
      outputSchema: z.object({ id: z.string(), name: z.string(), email: z.string().nullable(), address: z.object({ city: z.string() }).optional() }),
    },
    async ({ id }) => ({ content: [{ type: 'text', text: id }], structuredContent: { id, name: `user ${id}`, email: null } }),
  );
  server.registerTool('get_user', { description: 'A second tool that sanitizes to the same name.', inputSchema: z.object({}) }, async () => ({
    content: [{ type: 'text', text: 'the other get_user' }],
  }));
  server.registerTool('class', { inputSchema: z.object({ level: z.union([z.number(), z.literal('max')]) }) }, async ({ level }) => ({
    content: [{ type: 'text', text: `level ${level}` }],
  }));
  server.registerTool('1st', { description: 'Always fails.', inputSchema: z.object({}) }, async () => ({
    content: [{ type: 'text', text: 'nope' }],
    isError: true,
  }));
  return server;
}

let http: Server;
let url: string;
let work: string;

before(async () => {
  const handler = createMcpHandler(makeServer);
  // The pull must send --header values: the server answers 401 without the right one.
  http = createServer(
    toNodeHandler({
      fetch: async (request: Request) =>
        request.headers.get('authorization') === `Bearer ${SECRET}` ? handler.fetch(request) : new Response('unauthorized', { status: 401 }),
    }),
  );
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  work = await mkdtemp(join(tmpdir(), 'subako-pull-'));
});

after(async () => {
  await mcp.close();
  await new Promise<void>((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
  await rm(work, { recursive: true, force: true });
});

/** Schemas the server above cannot produce, generated directly, to check the mapping against tsc. */
const ZOO: ToolListing[] = [
  {
    name: 'tree-walk',
    inputSchema: {
      type: 'object',
      properties: {
        root: { $ref: '#/$defs/Node' },
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], minItems: 2, items: false },
        meta: { type: 'object', additionalProperties: { type: 'string' } },
        mode: { enum: ['fast', 'slow', null] },
        'content-type': { type: 'string' },
        anything: {},
      },
      required: ['root'],
      $defs: { Node: { type: 'object', properties: { value: { type: ['number', 'null'] }, children: { type: 'array', items: { $ref: '#/$defs/Node' } } }, required: ['value'] } },
    },
    outputSchema: { type: 'object', properties: { depth: { type: 'integer' } }, required: ['depth'], additionalProperties: false },
  },
  { name: 'toString', inputSchema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'number' } } },
  { name: 'evil */ name', description: 'ends */ early\u2028and more', inputSchema: { type: 'object', properties: { '*/': { type: 'string' } } } },
];

/** Uses the zoo's types: valid values must compile, invalid ones must not (each @ts-expect-error must be used). */
const CHECKS = `import type { TreeWalkInput, TreeWalkOutput, ToStringInput, Tools, JsonValue } from './zoo.js';

export const minimal: TreeWalkInput = { root: { value: null } };
export const full: TreeWalkInput = {
  root: { value: 1, children: [{ value: 2, children: [] }] },
  pair: ['a', 1],
  meta: { k: 'v' },
  mode: null,
  'content-type': 'text/plain',
  anything: { nested: [1, 'two', null] },
};
// @ts-expect-error root is required
export const noRoot: TreeWalkInput = {};
// @ts-expect-error value must be a number or null
export const badValue: TreeWalkInput = { root: { value: 'x' } };
// @ts-expect-error the tuple is [string, number]
export const badPair: TreeWalkInput = { root: { value: 1 }, pair: [1, 'a'] };
// @ts-expect-error mode is an enum
export const badMode: TreeWalkInput = { root: { value: 1 }, mode: 'medium' };
export const extra: ToStringInput = { a: 'x', n: 1 };
// @ts-expect-error additional properties are numbers
export const badExtra: ToStringInput = { n: true };
export async function use(tools: Tools): Promise<number> {
  const out: TreeWalkOutput = await tools.tree_walk(minimal);
  const json: JsonValue = out.depth;
  void json;
  await tools.toString({ a: 'b' });
  await tools.evil____name();
  return out.depth;
}
`;

describe('subako mcp pull', () => {
  let pulled: string;

  test('writes the bindings, and a second pull of the same server writes the same bytes', async () => {
    const out = join(work, 'tools.ts');
    const args = ['pull', '--url', url, '--out', out, '--header', `Authorization=Bearer ${SECRET}`];
    const first = await run(process.execPath, [RUNNER, ...args], work);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /wrote 5 tool bindings/);
    pulled = await readFile(out, 'utf8');
    const second = await run(process.execPath, [RUNNER, ...args], work);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(await readFile(out, 'utf8'), pulled, 'pull is deterministic');

    assert.ok(!pulled.includes(SECRET), 'the secret header value is not in the file');
    assert.ok(!first.stdout.includes(SECRET) && !first.stderr.includes(SECRET));
    assert.match(pulled, /^\/\/ Generated by subako/);
    assert.ok(pulled.includes(`--header 'Authorization=<value>'`), 'the header names the flag, not the value');
    assert.match(pulled, /^  get_user\(args: GetUserInput\): Promise<GetUserOutput>;$/m);
    assert.match(pulled, /^  get_user_2\(args\?: GetUser2Input\): Promise<CallToolResult>;$/m);
    assert.match(pulled, /^  class_\(args: ClassInput\): Promise<CallToolResult>;$/m);
    assert.match(pulled, /^  _1st\(args\?: T1stInput\): Promise<CallToolResult>;$/m);
  });

  test('without the header the server refuses, and pull fails with exit 1 leaving no file', async () => {
    const out = join(work, 'refused.ts');
    const result = await run(process.execPath, [RUNNER, 'pull', '--url', url, '--out', out], work);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^subako: /);
    assert.equal(existsSync(out), false);
  });

  test('the pulled module compiles with tsc (strict) and its wrappers call the real server', async () => {
    assert.ok(pulled, 'the first test wrote the bindings');
    const zoo = generateBindings({ url: 'http://127.0.0.1:1/zoo', tools: ZOO, command: 'subako mcp pull --url http://127.0.0.1:1/zoo --out zoo.ts' });
    const project = await makeProject(work, { 'tools.ts': pulled, 'zoo.ts': zoo, 'checks.ts': CHECKS });
    const compiled = await run(TSC, ['-p', 'tsconfig.json'], project);
    assert.equal(compiled.code, 0, `tsc failed:\n${compiled.stdout}${compiled.stderr}`);

    const bindings = (await import(pathToFileURL(join(project, 'out', 'tools.js')).href)) as {
      connect: (auth: unknown, url?: string) => Record<string, (args?: unknown) => Promise<unknown>>;
    };
    // `connect`'s default URL is the pulled one.
    const tools = bindings.connect(mcp.headers({ Authorization: `Bearer ${SECRET}` }));
    assert.deepEqual(await tools.add!({ x: 19, y: 23 }), { sum: 42 });
    assert.deepEqual(await tools.get_user!({ id: 'u7', tag: null }), { id: 'u7', name: 'user u7', email: null });
    const other = (await tools.get_user_2!()) as { content: Array<{ text: string }> };
    assert.equal(other.content[0]!.text, 'the other get_user');
    const classy = (await tools.class_!({ level: 'max' })) as { content: Array<{ text: string }> };
    assert.equal(classy.content[0]!.text, 'level max');
    await assert.rejects(tools._1st!(), (err: unknown) => err instanceof Error && (err as McpServerError).reason === 'tool_error');
  });
});
