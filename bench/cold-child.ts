/**
 * The fresh-process half of the cold-start rows (bench/cold-start.ts spawns it), doing what `subako call`
 * does: read a package directory, start a host, load the module, call one tool once, exit. Prints one JSON
 * line: milliseconds from the module bytes read to the first answer, and from the process's start (Node's
 * own time origin) to that answer. argv: the package directory, the tool, its arguments as JSON, and the
 * directory of instrumented modules ("" for none).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FunctionHost } from '../src/function/index.js';
import { readPackageDir } from '../src/package/package-dir.js';

const [dir, tool, args, cacheDir] = process.argv.slice(2);
const read = await readPackageDir(dir);
if (!read.ok) throw new Error(`${dir}: ${read.problems.map((p) => p.message).join('; ')}`);
const bytesRead = performance.now();
const host = new FunctionHost({ poolSize: 1, ...(cacheDir ? { preparedCacheDir: cacheDir } : {}) });
const tmpDir = mkdtempSync(join(tmpdir(), 'subako-bench-cold-'));
try {
  const loaded = await host.load({ name: read.manifest.name, moduleBytes: read.moduleBytes, assetsDir: read.assetsDir });
  const outcome = await host.call(loaded, tool, JSON.parse(args) as Record<string, unknown>, { tmpDir });
  const answered = performance.now();
  if (outcome.status !== 'ok') throw new Error(`the cold call ended ${outcome.status}`);
  process.stdout.write(`${JSON.stringify({ bytesToAnswerMs: answered - bytesRead, processToAnswerMs: answered })}\n`);
} finally {
  await host.close();
  rmSync(tmpDir, { recursive: true, force: true });
}
