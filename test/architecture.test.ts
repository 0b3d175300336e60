/**
 * The layers of ARCHITECTURE.md are enforced: dependency-cruiser runs the rules of .dependency-cruiser.cjs
 * on src/ (once) and must find nothing; the same rules, fed a small tree with an upward import, a circle,
 * a reach behind a room's face, a room importing the composition root and a server that could build its own
 * platform, must report each, so this test is shown able to fail.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

// dist/test/architecture.test.js → the repository root.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

async function cruiseIn(baseDir: string): Promise<ICruiseResult> {
  const options: ICruiseOptions = await extractDepcruiseOptions(join(ROOT, '.dependency-cruiser.cjs'));
  const tsConfig = extractTSConfig(join(ROOT, 'tsconfig.json'));
  const { output } = await cruise(['src'], { ...options, baseDir }, {}, { tsConfig });
  assert.equal(typeof output, 'object', 'cruise gives its result as an object');
  return output as ICruiseResult;
}

/** One line per violation, `rule: from -> to`, sorted, so a failure reads as a list of bad imports. */
function violations(result: ICruiseResult): string[] {
  return (result.summary.violations ?? [])
    .map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (circle ${v.cycle.map((step) => step.name).join(' -> ')})` : ''}`)
    .sort();
}

test('src/ keeps the layers: no upward import, no circle, every room entered through its face', async () => {
  const result = await cruiseIn(ROOT);
  assert.ok(result.summary.totalCruised > 100, `cruised ${result.summary.totalCruised} modules: src/ was found`);
  assert.deepEqual(violations(result), []);
});

test('the rules report an upward import, a circle, a reach behind a face, a second importer of the root and a server that could build its platform', async (t) => {
  const base = await mkdtemp(join(tmpdir(), 'subako-layers-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  const files: Record<string, string> = {
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
    // the composition root: `subako serve` may start it, another command may not.
    'src/app.ts': "import { reach } from './platform/index.js';\nexport const root = reach;\n",
    'src/cli/serve.ts': "import { root } from '../app.js';\nexport const serve = root;\n",
    'src/cli/other.ts': "import { root } from '../app.js';\nexport const other = root;\n",
    // server/ may use platform/'s types, not its values (a value is what would let it open a platform).
    'src/server/index.ts': "import type { Reach } from '../platform/index.js';\nexport const typed: Reach = 1;\n",
    'src/server/builds.ts': "import { reach } from '../platform/index.js';\nexport const built = reach;\n",
    // nor run a guest itself: sandbox/ is below it in the layers, but only the runtime the root built uses it.
    'src/sandbox/index.ts': "export const run = 3;\n",
    'src/server/guest.ts': "import { run } from '../sandbox/index.js';\nexport const ran = run;\n",
  };
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(base, path)), { recursive: true });
    await writeFile(join(base, path), text);
  }
  const found = violations(await cruiseIn(base));
  const rulesFound = new Set(found.map((line) => line.split(':')[0]));
  assert.ok(found.includes('layer-wasm: src/wasm/upward.ts -> src/cli/index.ts'), found.join('\n'));
  assert.ok(found.some((line) => line.startsWith('no-circular: src/egress/first.ts -> src/egress/second.ts')), found.join('\n'));
  assert.ok(found.includes('enter-through-the-face: src/platform/index.ts -> src/package/inner.ts'), found.join('\n'));
  assert.ok(found.includes('only-serve-imports-the-root: src/cli/other.ts -> src/app.ts'), found.join('\n'));
  assert.ok(!found.some((line) => line.includes('src/cli/serve.ts -> src/app.ts')), found.join('\n'));
  assert.ok(found.includes('server-builds-no-runtime: src/server/builds.ts -> src/platform/index.ts'), found.join('\n'));
  assert.ok(!found.some((line) => line.includes('src/server/index.ts -> src/platform/index.ts')), found.join('\n'));
  assert.ok(found.includes('server-runs-no-guest: src/server/guest.ts -> src/sandbox/index.ts'), found.join('\n'));
  assert.deepEqual([...rulesFound].sort(), [
    'enter-through-the-face', 'layer-wasm', 'no-circular', 'only-serve-imports-the-root', 'server-builds-no-runtime', 'server-runs-no-guest',
  ]);
});
