/**
 * The layers of ARCHITECTURE.md are enforced: dependency-cruiser runs the rules of .dependency-cruiser.cjs
 * on src/ and console/src/ (once) and must find nothing; the same rules, fed small trees with one planted
 * import per rule — an upward import, a circle, a reach behind a room's face, a room importing the
 * composition root, a server that could build its own platform, each "must not know" row the layer order
 * does not hold, and each outside module used outside its rooms — must report each plant, by that rule
 * and no other, so this test is shown able to fail. The plants' trees link this checkout's node_modules,
 * so a package resolves as it does in src/.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

// dist/test/architecture.test.js → the repository root.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** What `npm run layers` cruises. */
const CRUISED = ['src', 'console/src'];

async function cruiseIn(baseDir: string, folders = ['src']): Promise<ICruiseResult> {
  const options: ICruiseOptions = await extractDepcruiseOptions(join(ROOT, '.dependency-cruiser.cjs'));
  const tsConfig = extractTSConfig(join(ROOT, 'tsconfig.json'));
  const { output } = await cruise(folders, { ...options, baseDir }, {}, { tsConfig });
  assert.equal(typeof output, 'object', 'cruise gives its result as an object');
  return output as ICruiseResult;
}

/** One line per violation, `rule: from -> to`, sorted, so a failure reads as a list of bad imports. */
function violations(result: ICruiseResult): string[] {
  return (result.summary.violations ?? [])
    .map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (circle ${v.cycle.map((step) => step.name).join(' -> ')})` : ''}`)
    .sort();
}

/** Writes `files` (path → text) under a new temporary folder, linked to this checkout's node_modules. */
async function plantTree(t: { after(fn: () => Promise<void>): void }, files: Record<string, string>): Promise<string> {
  const base = await mkdtemp(join(tmpdir(), 'subako-layers-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  await symlink(join(ROOT, 'node_modules'), join(base, 'node_modules'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(base, path)), { recursive: true });
    await writeFile(join(base, path), text);
  }
  return base;
}

test('src/ and console/src/ keep the layers: no upward import, no circle, every room entered through its face, every outside module in its rooms', async () => {
  const result = await cruiseIn(ROOT, CRUISED);
  assert.ok(result.summary.totalCruised > 100, `cruised ${result.summary.totalCruised} modules: src/ was found`);
  assert.deepEqual(violations(result), []);
});

test('the rules report an upward import, a circle, a reach behind a face, a second importer of the root and a server that could build its platform', async (t) => {
  const base = await plantTree(t, {
    // wasm/ is the bottom room: importing cli/ points up.
    'src/wasm/index.ts': "export { upward } from './upward.js';\n",
    'src/wasm/upward.ts': "import { command } from '../cli/index.js';\nexport const upward = command;\n",
    'src/cli/index.ts': "export const command = 'subako';\n",
    // two files of one room that import each other.
    'src/egress/index.ts': "export { first } from './first.js';\n",
    'src/egress/first.ts': "import { second } from './second.js';\nexport const first = (): number => second() + 1;\n",
    'src/egress/second.ts': "import { first } from './first.js';\nexport const second = (): number => first() - 1;\n",
    // platform/ may use package/, but only through package/index.ts.
    'src/package/index.ts': "export const face = 1;\n",
    'src/package/inner.ts': "export const inner = 2;\n",
    'src/platform/index.ts': "import { inner } from '../package/inner.js';\nexport const reach = inner;\nexport type Reach = number;\n",
    // the composition root: `subako serve` and `subako worker` may start it, another command may not.
    'src/app.ts': "import { reach } from './platform/index.js';\nexport const root = reach;\n",
    'src/cli/serve.ts': "import { root } from '../app.js';\nexport const serve = root;\n",
    'src/cli/worker.ts': "import { root } from '../app.js';\nexport const worker = root;\n",
    'src/cli/other.ts': "import { root } from '../app.js';\nexport const other = root;\n",
    // server/ may use platform/'s types, not its values (a value is what would let it open a platform).
    'src/server/index.ts': "import type { Reach } from '../platform/index.js';\nexport const typed: Reach = 1;\n",
    'src/server/builds.ts': "import { reach } from '../platform/index.js';\nexport const built = reach;\n",
    // nor run a guest itself: sandbox/ is below it in the layers, but only the runtime the root built uses it.
    'src/sandbox/index.ts': "export const run = 3;\n",
    'src/server/guest.ts': "import { run } from '../sandbox/index.js';\nexport const ran = run;\n",
  });
  const found = violations(await cruiseIn(base));
  const rulesFound = new Set(found.map((line) => line.split(':')[0]));
  assert.ok(found.includes('layer-wasm: src/wasm/upward.ts -> src/cli/index.ts'), found.join('\n'));
  assert.ok(found.some((line) => line.startsWith('no-circular: src/egress/first.ts -> src/egress/second.ts')), found.join('\n'));
  assert.ok(found.includes('enter-through-the-face: src/platform/index.ts -> src/package/inner.ts'), found.join('\n'));
  assert.ok(found.includes('only-serve-and-worker-import-the-root: src/cli/other.ts -> src/app.ts'), found.join('\n'));
  assert.ok(!found.some((line) => line.includes('src/cli/serve.ts -> src/app.ts') || line.includes('src/cli/worker.ts -> src/app.ts')), found.join('\n'));
  assert.ok(found.includes('server-builds-no-runtime: src/server/builds.ts -> src/platform/index.ts'), found.join('\n'));
  assert.ok(!found.some((line) => line.includes('src/server/index.ts -> src/platform/index.ts')), found.join('\n'));
  assert.ok(found.includes('server-runs-no-guest: src/server/guest.ts -> src/sandbox/index.ts'), found.join('\n'));
  assert.deepEqual([...rulesFound].sort(), [
    'enter-through-the-face', 'layer-wasm', 'no-circular', 'only-serve-and-worker-import-the-root', 'server-builds-no-runtime', 'server-runs-no-guest',
  ]);
});

/** A face that exports one value and one type, so a plant can import either. */
const face = (name: string): string => `export const ${name} = 1;\nexport type ${name[0].toUpperCase()}${name.slice(1)} = number;\n`;

test('each "must not know" row the layer order would allow, and each outside module used outside its rooms, is reported by its rule and no other', async (t) => {
  // The plants, each `file -> import` with the rule that must report it.
  const planted: Record<string, [string, string, string]> = {
    // [file, its text, the violation it must give]
    console: ['console/src/plant.ts', "import { common } from '../../src/common/index.js';\nexport const c = common;\n",
      'console-knows-no-src: console/src/plant.ts -> src/common/index.ts'],
    consoleApiValue: ['console/src/plant-api-value.ts', "import { api } from '../../src/server/api/index.js';\nexport const a = api;\n",
      'console-takes-only-api-types: console/src/plant-api-value.ts -> src/server/api/index.ts'],
    apiTypesImport: ['src/server/api/plant-common.ts', "import { common } from '../../common/index.js';\nexport const c = common;\n",
      'api-types-stand-alone: src/server/api/plant-common.ts -> src/common/index.ts'],
    devkitPlatform: ['src/devkit/plant-platform.ts', "import { platform } from '../platform/index.js';\nexport const p = platform;\n",
      'devkit-knows-no-platform-or-server: src/devkit/plant-platform.ts -> src/platform/index.ts'],
    devkitServer: ['src/devkit/plant-server.ts', "import type { Server } from '../server/index.js';\nexport type S = Server;\n",
      'devkit-knows-no-platform-or-server: src/devkit/plant-server.ts -> src/server/index.ts'],
    // server/ may import platform/'s types (server-builds-no-runtime), but not the store's, nor through its face.
    serverStore: ['src/server/plant-store.ts', "import type { Store } from '../platform/store/index.js';\nexport type S = Store;\n",
      'server-knows-no-sql: src/server/plant-store.ts -> src/platform/store/index.ts'],
    serverStoreValue: ['src/server/plant-store-value.ts', "import { drivers } from '../platform/store/index.js';\nexport const d = drivers;\n",
      'server-knows-no-sql: src/server/plant-store-value.ts -> src/platform/store/index.ts'],
    mcpFunction: ['src/mcp/plant-function.ts', "import { fn } from '../function/index.js';\nexport const f = fn;\n",
      'mcp-knows-no-wasm: src/mcp/plant-function.ts -> src/function/index.ts'],
    mcpWasm: ['src/mcp/plant-wasm.ts', "import type { Wasm } from '../wasm/index.js';\nexport type W = Wasm;\n",
      'mcp-knows-no-wasm: src/mcp/plant-wasm.ts -> src/wasm/index.ts'],
    functionSocket: ['src/function/plant-socket.ts', "import { connect } from 'node:net';\nexport const c = connect;\n",
      'function-knows-no-sockets: src/function/plant-socket.ts -> net'],
    egressInstance: ['src/egress/plant-instance.ts', "import { sandbox } from '../sandbox/index.js';\nexport const s = sandbox;\n",
      'egress-holds-no-wasm-instance: src/egress/plant-instance.ts -> src/sandbox/index.ts'],
    wasmBuiltin: ['src/wasm/plant-io.ts', "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n",
      'wasm-knows-nothing-else: src/wasm/plant-io.ts -> fs'],
    wasmCommon: ['src/wasm/plant-common.ts', "import { common } from '../common/index.js';\nexport const c = common;\n",
      'wasm-knows-nothing-else: src/wasm/plant-common.ts -> src/common/index.ts'],
    sqlValue: ['src/cli/plant-sql.ts', "import pg from 'pg';\nexport const p = pg;\n",
      'sql-only-in-the-store: src/cli/plant-sql.ts -> node_modules/pg'],
    sqlType: ['src/function/plant-sql-type.ts', "import type Database from 'better-sqlite3';\nexport type D = Database.Database;\n",
      'sql-only-in-the-store: src/function/plant-sql-type.ts -> node_modules/better-sqlite3'],
    nats: ['src/platform/plant-nats.ts', "import { connect } from '@nats-io/transport-node';\nexport const c = connect;\n",
      'nats-only-in-scale-out: src/platform/plant-nats.ts -> node_modules/@nats-io/transport-node'],
    // dependency-cruiser does not resolve @nats-io/obj (here as in src/): it is named by its bare name.
    natsUnresolved: ['src/sandbox/plant-nats.ts', "import { Objm } from '@nats-io/obj';\nexport const o = Objm;\n",
      'nats-only-in-scale-out: src/sandbox/plant-nats.ts -> @nats-io/obj'],
    httpPlatform: ['src/platform/plant-http.ts', "import { request } from 'node:http';\nexport const r = request;\n",
      'http-only-where-http-lives: src/platform/plant-http.ts -> http'],
    httpCli: ['src/cli/plant-https.ts', "import { get } from 'node:https';\nexport const g = get;\n",
      'http-only-where-http-lives: src/cli/plant-https.ts -> https'],
    httpUndici: ['src/sandbox/plant-undici.ts', "import { fetch } from 'undici';\nexport const f = fetch;\n",
      'http-only-where-http-lives: src/sandbox/plant-undici.ts -> node_modules/undici'],
    mcpSdk: ['src/package/plant-mcp-sdk.ts', "import { Client } from '@modelcontextprotocol/client';\nexport const c = Client;\n",
      'mcp-sdk-only-in-mcp: src/package/plant-mcp-sdk.ts -> node_modules/@modelcontextprotocol/client'],
  };
  // What the rules allow, beside the plants: none of these may be reported.
  const allowed: Record<string, string> = {
    'src/platform/store/index.ts': "import Database from 'better-sqlite3';\nimport pg from 'pg';\nexport const drivers = [Database, pg];\nexport type Store = number;\n",
    'src/platform/scale-out/index.ts': "import { connect } from '@nats-io/transport-node';\nexport const bus = connect;\n",
    'src/package/nats-blob-store.ts': "import { Objm } from '@nats-io/obj';\nexport const blobs = Objm;\n",
    'src/server/listen.ts': "import { createServer } from 'node:http';\nimport type { Store } from '../platform/index.js';\nexport const listen = createServer;\nexport type S = Store;\n",
    'src/mcp/transport.ts': "import { request } from 'node:https';\nimport { Client } from '@modelcontextprotocol/client';\nexport const both = [request, Client];\n",
    'src/egress/fetch.ts': "import { Client } from 'undici';\nimport { connect } from 'node:tls';\nimport type { Sandbox } from '../sandbox/index.js';\nexport const fetchVia = [Client, connect];\nexport type S = Sandbox;\n",
    'src/egress/answer.ts': "import { sandbox } from '../sandbox/index.js';\nexport const answer = sandbox;\n",
    'src/cli/api-client.ts': "import { fetch } from 'undici';\nexport const client = fetch;\n",
    'src/wasm/errors-only.ts': "import { SubakoError } from '../errors.js';\nexport const e = SubakoError;\n",
    'src/errors.ts': 'export class SubakoError extends Error {}\n',
    'src/function/uses-egress.ts': "import { egress } from '../egress/index.js';\nimport { createHash } from 'node:crypto';\nexport const uses = [egress, createHash];\n",
    'src/devkit/uses-mcp.ts': "import { mcp } from '../mcp/index.js';\nexport const uses = mcp;\n",
    'console/src/main.ts': "import { render } from 'preact';\nexport const r = render;\n",
    // The API's types: zod inside; the console takes them type-only, the command line too.
    'src/server/api/index.ts': "import { z } from 'zod';\nexport const api = z.string();\nexport type Api = z.infer<typeof api>;\n",
    'console/src/api-types.ts': "import type { Api } from '../../src/server/api/index.js';\nexport type A = Api;\n",
    'src/cli/api-types.ts': "import type { Api } from '../server/api/index.js';\nexport type A = Api;\n",
  };
  const faces = Object.fromEntries(['common', 'devkit', 'server', 'platform', 'mcp', 'function', 'package', 'egress', 'sandbox', 'wasi', 'wasm', 'cli']
    .map((room) => [`src/${room}/index.ts`, face(room === 'function' ? 'fn' : room)]));
  const base = await plantTree(t, {
    ...faces,
    ...allowed,
    ...Object.fromEntries(Object.values(planted).map(([file, text]) => [file, text])),
  });
  const result = await cruiseIn(base, CRUISED);
  // The tree's node_modules is a link: a package resolves to wherever its real folder is; name it from node_modules/ on.
  const found = violations(result).map((line) => line.replace(/ -> (?:\S*\/)?node_modules\/((?:@[^/]+\/)?[^/]+)\S*$/, ' -> node_modules/$1'));
  assert.deepEqual(found, Object.values(planted).map(([, , violation]) => violation).sort());
});
