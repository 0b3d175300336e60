/**
 * The layers of ARCHITECTURE.md, enforced (test/architecture.test.ts runs this on src/ in `npm test`).
 *
 * Rooms are the folders under src/, top to bottom. An import may point down the list, never up; common/
 * is the floor that every room may use and that uses no room. The shared leaves beside the rooms
 * (src/tool.ts, errors.ts, config.ts, version.ts: the Tool type, the error classes, the typed config and
 * the version) sit on that floor with common/: any room may import them, and they import no room (only
 * each other and common/). src/index.ts (the library face) and the composition root (src/app.ts) sit on
 * top: they may import any room, through its face. The root builds the runtime, the platform and the HTTP
 * server; `subako serve` (src/cli/serve.ts) starts it, because the command line is the program's edge, and no
 * other file in src/ imports it (and it imports nothing of cli/, so the two never form a circle). server/ is
 * handed the platform it serves: it uses platform/'s types, and its error classes only to map them to HTTP.
 *
 * A room is entered from outside through its index.ts (or a sub-room's index.ts, e.g. mcp/oauth/);
 * its other files are its own business.
 */
const ROOMS = ['cli', 'devkit', 'server', 'platform', 'mcp', 'function', 'package', 'egress', 'sandbox', 'wasi', 'wasm', 'common'];
const LEAVES = '^src/(tool|errors|config|version)[.]ts$';
const TOP = '^src/(index|app)[.]ts$';
const LIBRARY_FACE = '^src/index[.]ts$';
const ROOT = '^src/app[.]ts$';
/** A room's face, and a sub-room's (mcp/oauth/index.ts). */
const FACES = ['^src/[^/]+/index[.]ts$', '^src/[^/]+/[^/]+/index[.]ts$'];

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
      comment: 'the shared leaves (tool, errors, config, version) sit on the floor: they import only each other and common/',
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
      name: 'only-serve-imports-the-root',
      comment: 'the composition root (src/app.ts) is started by `subako serve` (src/cli/serve.ts) and imported by no other file in src/',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/serve[.]ts$' },
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
      comment: 'server/ is handed its platform by the composition root: it imports platform/ for types only (so it cannot call Platform.open or build a FunctionRuntime), except http-error.ts, which maps platform/\'s error classes to HTTP',
      severity: 'error',
      from: { path: '^src/server/', pathNot: '^src/server/http-error[.]ts$' },
      to: { path: '^src/platform/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'server-runs-no-guest',
      comment: 'server/ runs no guest itself: the platform\'s tools do, through the runtime the composition root built (no function/, no sandbox/, no wasi/, no wasm/)',
      severity: 'error',
      from: { path: '^src/server/' },
      to: { path: '^src/(function|sandbox|wasi|wasm)/' },
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
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['es6'],
  },
};
