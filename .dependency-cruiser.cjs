/**
 * The layers of ARCHITECTURE.md, enforced (test/architecture.test.ts runs this on src/ and console/src/ in
 * `npm test`).
 *
 * Rooms are the folders under src/, top to bottom. An import may point down the list, never up; common/
 * is the floor that every room may use and that uses no room. The shared leaves beside the rooms
 * (src/tool.ts, errors.ts, call-limits.ts, settings.ts, setting-kinds.ts, config.ts, version.ts: the Tool
 * type, the error classes, the call limits, the settings' declarations and kinds, the typed config and the
 * version) sit on that floor with common/: any room may import them, and they import no room (only each other
 * and common/). src/index.ts (the library face) and the composition root (src/app.ts) sit on top: they may
 * import any room, through its face. The root builds the runtime, the platform and the HTTP server, and a
 * worker node; `subako serve` and `subako worker` (src/cli/serve.ts, worker.ts) start them, because the
 * command line is the program's edge, and no other file in src/ imports it (and it imports nothing of cli/,
 * so the two never form a circle). server/ is handed the platform it serves: it uses platform/'s types, and
 * its error classes only to map them to HTTP.
 *
 * A room is entered from outside through its index.ts (or a sub-room's index.ts, e.g. mcp/oauth/);
 * its other files are its own business.
 *
 * ARCHITECTURE.md's "must not know" column, row by row, and what holds it (the layer order holds every
 * "nothing above it"; a rule of its own holds what the order would allow):
 *
 *   cli/       how anything works inside    enter-through-the-face (and the faces of the sub-rooms)
 *   console/   the store, anything in src/  console-knows-no-src, console-takes-only-api-types (the API's types,
 *              but the API's types          from server/api/, are the one thing it takes: type-only),
 *                                           api-types-stand-alone (so they bring nothing else of src/ with them)
 *   devkit/    the platform, the server     devkit-knows-no-platform-or-server
 *   server/    SQL, WASM                    server-knows-no-sql, sql-only-in-the-store, server-runs-no-guest
 *   platform/  HTTP                         the layer order (server/), http-only-where-http-lives
 *   mcp/       WASM                         mcp-knows-no-wasm
 *   function/  sockets, SQL                 function-knows-no-sockets, http-only-where-http-lives,
 *                                           sql-only-in-the-store, the layer order (platform/store/)
 *   package/   MCP                          the layer order (mcp/), mcp-sdk-only-in-mcp
 *   egress/    WASM instances               egress-holds-no-wasm-instance
 *   sandbox/   MCP, HTTP semantics          the layer order (mcp/, egress/, server/), mcp-sdk-only-in-mcp,
 *                                           http-only-where-http-lives
 *   wasi/      anything above it            the layer order
 *   wasm/      everything else              wasm-knows-nothing-else (not even Node's builtins, nor common/)
 *   telemetry/ everything above it          the layer order, only-the-root-starts-traces (the spans are made
 *                                           through common/'s trace.ts, with OpenTelemetry's API only)
 *   common/    everything above it          the layer order
 *
 * Outside modules are confined as rooms are: the SQL drivers to platform/store/, the NATS client to
 * platform/scale-out/ and the NATS blob store, HTTP (node:http, node:https, node:http2, undici) to the rooms
 * where HTTP lives, the MCP SDK to mcp/, OpenTelemetry's SDK and exporter to telemetry/. Each rule says one thing and leaves to the others what they say, so
 * an import that breaks one rule is reported by that rule. (A module loaded through
 * `createRequire(...)(name)` is out of dependency-cruiser's sight: egress/'s undici and function/'s sharp
 * are loaded that way, each in a room allowed to.)
 */
const ROOMS = ['cli', 'devkit', 'server', 'platform', 'mcp', 'function', 'package', 'egress', 'sandbox', 'wasi', 'wasm', 'telemetry', 'common'];
const LEAVES = '^src/(tool|errors|config|settings|setting-kinds|call-limits|version)[.]ts$';
const TOP = '^src/(index|app)[.]ts$';
const LIBRARY_FACE = '^src/index[.]ts$';
/** The REST API's bodies as zod schemas (server/api/): the one part of src/ the console takes types from. */
const API_TYPES = '^src/server/api/';
const ROOT = '^src/app[.]ts$';
/** A room's face, and a sub-room's (mcp/oauth/index.ts). */
/**
 * A room's faces: its index.ts, and, where a room has them, its lean.ts: the few names a sandbox worker needs as
 * it starts, and its first-call.ts: the names a host (and its sandbox process) needs up to a fresh process's first
 * answer; each without what the index loads besides (every file a fresh process imports is paid for on its first
 * call, a worker's on the path to it, and the index of a room loads all of the room). Two narrow faces, not one:
 * a worker needs fewer names than a host, and each file more costs it about a millisecond.
 */
const FACES = ['^src/[^/]+/index[.]ts$', '^src/[^/]+/lean[.]ts$', '^src/[^/]+/first-call[.]ts$', '^src/[^/]+/[^/]+/index[.]ts$'];

/**
 * An outside module as dependency-cruiser resolves it: a Node builtin by its name (`node:` or not), a package
 * by its folder under node_modules (its own, or its @types), or by its bare name when it cannot be resolved.
 */
const builtin = (...names) => `^(node:)?(${names.join('|')})$`;
const npmPackage = (...names) => `(^|(^|/)node_modules/)(@types/)?(${names.join('|')})(/|$)`;
const SQL = [npmPackage('pg', 'better-sqlite3'), builtin('sqlite')];
const HTTP = [builtin('http', 'https', 'http2'), npmPackage('undici')];
/** Sockets other than HTTP's (which HTTP confines on its own). */
const SOCKETS = builtin('net', 'tls', 'dgram', 'dns', 'dns/promises');

const layerRules = ROOMS.map((room, index) => ({
  name: `layer-${room}`,
  comment: `${room}/ may import only the rooms below it (${ROOMS.slice(index + 1).join(', ') || 'none'}) and the shared leaves`,
  severity: 'error',
  from: { path: `^src/${room}/` },
  to: { path: index === 0 ? '^$' : `^src/(${ROOMS.slice(0, index).join('|')})/` },
})).filter((rule) => rule.to.path !== '^$');

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no import closes a circle (type-only imports count: they are a dependency all the same)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'leaves-import-no-room',
      comment: 'the shared leaves (tool, errors, call-limits, settings, setting-kinds, config, version) sit on the floor: they import only each other and common/',
      severity: 'error',
      from: { path: LEAVES },
      to: { path: '^src/[^/]+/', pathNot: '^src/common/' },
    },
    {
      name: 'nothing-imports-the-library-face',
      comment: 'src/index.ts (the library face) is imported by no file in src/',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: LIBRARY_FACE },
    },
    {
      name: 'only-serve-and-worker-import-the-root',
      comment: 'the composition root (src/app.ts) is started by `subako serve` and `subako worker` (src/cli/serve.ts, worker.ts) and imported by no other file in src/',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/(serve|worker)[.]ts$' },
      to: { path: ROOT },
    },
    {
      name: 'root-imports-no-cli',
      comment: 'the composition root builds the program below the command line: it imports nothing of cli/',
      severity: 'error',
      from: { path: ROOT },
      to: { path: '^src/cli/' },
    },
    {
      name: 'server-builds-no-runtime',
      comment: 'server/ is handed its platform by the composition root: it imports platform/ for types only (so it cannot call Platform.open or build a FunctionRuntime), except http-error.ts, which maps platform/\'s error classes to HTTP (platform/store/ is server-knows-no-sql\'s to report)',
      severity: 'error',
      from: { path: '^src/server/', pathNot: '^src/server/http-error[.]ts$' },
      to: { path: '^src/platform/', pathNot: '^src/platform/store/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'server-runs-no-guest',
      comment: 'server/ runs no guest itself: the platform\'s tools do, through the runtime the composition root built (no function/, no sandbox/, no wasi/, no wasm/)',
      severity: 'error',
      from: { path: '^src/server/' },
      to: { path: '^src/(function|sandbox|wasi|wasm)/' },
    },
    {
      name: 'console-knows-no-src',
      comment: 'console/ is built from its own sources: it imports nothing of src/ (nor the store in it) but the API\'s types, from server/api/',
      severity: 'error',
      from: { path: '^console/' },
      to: { path: '^src/', pathNot: API_TYPES },
    },
    {
      name: 'console-takes-only-api-types',
      comment: 'console/ takes the API\'s types from server/api/ (the schemas the server declares the bodies with) type-only: no value of src/ is bundled into the console',
      severity: 'error',
      from: { path: '^console/' },
      to: { path: API_TYPES, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'api-types-stand-alone',
      comment: 'server/api/ (the REST API\'s bodies) imports only itself and zod: the console\'s compiler reads it without the rest of src/, and the command line takes its types without the server',
      severity: 'error',
      from: { path: API_TYPES },
      to: { pathNot: [API_TYPES, npmPackage('zod')] },
    },
    {
      name: 'devkit-knows-no-platform-or-server',
      comment: 'devkit/ writes, builds and serves packages on the author\'s machine: it knows neither the platform nor the server (the layer order would let it)',
      severity: 'error',
      from: { path: '^src/devkit/' },
      to: { path: '^src/(platform|server)/' },
    },
    {
      name: 'server-knows-no-sql',
      comment: 'server/ knows no SQL: not the store (platform/store/), not even its types; the platform it is handed does the storing',
      severity: 'error',
      from: { path: '^src/server/' },
      to: { path: '^src/platform/store/' },
    },
    {
      name: 'mcp-knows-no-wasm',
      comment: 'mcp/ is the MCP integration and knows no WASM: no function/, package/, sandbox/, wasi/ or wasm/ (the layer order would let it)',
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: { path: '^src/(function|package|sandbox|wasi|wasm)/' },
    },
    {
      name: 'function-knows-no-sockets',
      comment: 'function/ talks to a guest, never to the network: no node:net, node:tls, node:dgram, node:dns (egress/ does the requests; HTTP and SQL have rules of their own)',
      severity: 'error',
      from: { path: '^src/function/' },
      to: { path: SOCKETS },
    },
    {
      name: 'egress-holds-no-wasm-instance',
      comment: 'egress/ does the request a guest asked for and holds no WASM instance: of sandbox/ it takes types only (the run\'s context, the bridge handler), but for answer.ts, which builds the error answer with the subako_http ABI table\'s one shape (httpErrorAnswer); of wasm/, nothing',
      severity: 'error',
      from: { path: '^src/egress/', pathNot: '^src/egress/answer[.]ts$' },
      to: { path: '^src/(sandbox|wasm)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'wasm-knows-nothing-else',
      comment: 'wasm/ is pure functions on bytes: it imports only itself and the shared error classes (src/errors.ts); no common/, no other leaf, no Node builtin, no package (the rooms above are the layer order\'s to report)',
      severity: 'error',
      from: { path: '^src/wasm/' },
      to: { pathNot: ['^src/wasm/', '^src/errors[.]ts$', `^src/(${ROOMS.filter((room) => room !== 'common').join('|')})/`, TOP] },
    },
    {
      name: 'sql-only-in-the-store',
      comment: 'the SQL drivers (pg, better-sqlite3, node:sqlite) are used in platform/store/ only',
      severity: 'error',
      from: { pathNot: '^src/platform/store/' },
      to: { path: SQL },
    },
    {
      name: 'nats-only-in-scale-out',
      comment: 'the NATS client (@nats-io/*) is used in platform/scale-out/ (the bus, workers, the fleet) and package/nats-blob-store.ts (package bytes in the JetStream object store) only',
      severity: 'error',
      from: { pathNot: ['^src/platform/scale-out/', '^src/package/nats-blob-store[.]ts$'] },
      to: { path: npmPackage('@nats-io/[^/]+') },
    },
    {
      name: 'http-only-where-http-lives',
      comment: 'HTTP (node:http, node:https, node:http2, undici) is used where it lives only: server/ (the API, and a worker\'s metrics listener), mcp/ (MCP over HTTP both ways, the OAuth loopback), egress/ (subako_http\'s fetch) and the command line\'s REST client (cli/api-client.ts)',
      severity: 'error',
      from: { pathNot: ['^src/(server|mcp|egress)/', '^src/cli/api-client[.]ts$'] },
      to: { path: HTTP },
    },
    {
      name: 'mcp-sdk-only-in-mcp',
      comment: 'the MCP SDK (@modelcontextprotocol/*) is used in mcp/ only: every other room reaches MCP through mcp/\'s face',
      severity: 'error',
      from: { pathNot: '^src/mcp/' },
      to: { path: npmPackage('@modelcontextprotocol/[^/]+') },
    },
    {
      name: 'otel-sdk-only-in-telemetry',
      comment: 'OpenTelemetry\'s SDK and exporter are set up in telemetry/ only: every other room makes spans with the API (@opentelemetry/api, through common/\'s trace.ts)',
      severity: 'error',
      from: { pathNot: '^src/telemetry/' },
      to: { path: npmPackage('@opentelemetry/(?!api/|api$)[^/]+') },
    },
    {
      name: 'only-the-root-starts-traces',
      comment: 'the process\'s traces are started once, by the composition root at serve/worker start: no room imports telemetry/',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/telemetry/', ROOT] },
      to: { path: '^src/telemetry/' },
    },
    {
      name: 'enter-through-the-face',
      comment: 'a room is entered from outside through its index.ts (or a sub-room\'s index.ts), never a file behind it',
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/[^/]+/', pathNot: ['^src/$1/', ...FACES] },
    },
    {
      name: 'enter-a-sub-room-through-its-face',
      comment: 'a sub-room (platform/calls/, mcp/oauth/, …) is entered from anywhere outside it through its index.ts',
      severity: 'error',
      from: { path: '^(src/[^/]+/[^/]+)/' },
      to: { path: '^src/[^/]+/[^/]+/', pathNot: ['^$1/', '^src/[^/]+/[^/]+/index[.]ts$'] },
    },
    {
      name: 'a-room-enters-its-sub-rooms-through-their-faces',
      comment: 'a file at the top of a room enters that room\'s sub-rooms through their index.ts too',
      severity: 'error',
      from: { path: '^src/[^/]+/[^/]+[.]tsx?$' },
      to: { path: '^src/[^/]+/[^/]+/', pathNot: '^src/[^/]+/[^/]+/index[.]ts$' },
    },
    {
      name: 'top-enters-through-the-face',
      comment: 'the library face and the composition root use a room through its index.ts too',
      severity: 'error',
      from: { path: TOP },
      to: { path: '^src/[^/]+/', pathNot: FACES },
    },
  ],
  options: {
    // Outside modules stay in the graph (the rules above look at them) but are not followed into.
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['es6'],
  },
};
